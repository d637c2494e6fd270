import type { OutputStep, StepRequest } from '@venus/protocol';

/** A step that says nothing: the shape every dialogue starts its output from. */
export function listenStep(stepSeq: number, request: StepRequest, audioChunkSeq = 0): OutputStep {
  return {
    stepSeq,
    chunk: request.chunk,
    inputSeqCutoff: request.inputSeqCutoff,
    decision: 'listen',
    text: '',
    utteranceId: null,
    audio: null,
    audioChunkSeq,
    turnFinished: false,
  };
}

/** Ends `out` as the last step of an utterance (`interrupted` when it was still being spoken). */
export function closeUtterance(
  out: OutputStep,
  utteranceId: string | null,
  chunkSeq: number,
  interrupted: boolean,
): OutputStep {
  out.utteranceId = utteranceId;
  out.audioChunkSeq = chunkSeq;
  if (interrupted) {
    out.turnFinished = true;
    out.finishReason = 'interrupted';
  }
  return out;
}
