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
