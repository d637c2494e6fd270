import { base64ToPcm, type OutputStep, pcmDurationMs, VenusError } from '@venus/protocol';
import { type CheckpointTokenizer, TokenStreamDecoder } from './token-decoder.ts';
import type { ModelOutputStep } from './wire-schemas.ts';

interface Generation {
  id: string;
  epoch: number;
  utteranceId: string | null;
  finished: boolean;
  nextAudioChunk: number;
}

interface UtteranceRecord {
  /** End of each emitted audio chunk on the utterance's own clock, in ms. */
  chunkEndsMs: number[];
  ackedChunks: number;
  workId: string;
}

const KEPT_UTTERANCES = 32;

/**
 * Turns the service's output steps into the runtime's OutputSteps for one session.
 *
 * A service generation that speaks becomes one utterance (a foreground listen chunk is a generation
 * of its own and speaks nothing); a generation created by a prefill marks its utterance with the
 * prefill's attempt. Delta token ids are decoded with the checkpoint tokenizer; turn ends come from
 * `turn_finished` or a `<|turn_eos|>` token. It also remembers each utterance's audio chunk lengths,
 * so played milliseconds become the service's count of played chunks.
 *
 * @example
 *   const t = new OutputStepTranslator(tokenizer, specialTokenIds, 'my-sid', 3);
 *   const step = t.translate(serviceStep, { chunk: 12, inputSeqCutoff: 40, stepSeq: 7 });
 */
export class OutputStepTranslator {
  private readonly decoder: TokenStreamDecoder;
  private readonly sessionId: string;
  private readonly serviceIncarnation: number;
  private generation: Generation | null = null;
  private readonly utterances = new Map<string, UtteranceRecord>();
  private readonly prefillByGeneration = new Map<string, { attemptId: string; workId: string }>();

  constructor(
    tokenizer: CheckpointTokenizer,
    specialTokenIds: Readonly<Record<string, number>>,
    sessionId: string,
    serviceIncarnation: number,
  ) {
    this.decoder = new TokenStreamDecoder(tokenizer, specialTokenIds);
    this.sessionId = sessionId;
    this.serviceIncarnation = serviceIncarnation;
  }

  /** The generation a prefill started; its first speaking step names the attempt. */
  notePrefill(generationId: string, attemptId: string, workId: string): void {
    this.prefillByGeneration.set(generationId, { attemptId, workId });
  }

  translate(raw: ModelOutputStep, at: { chunk: number; inputSeqCutoff: number; stepSeq: number }): OutputStep {
    if (raw.session_id !== this.sessionId || raw.incarnation !== this.serviceIncarnation)
      throw new VenusError(
        'model_step_failed',
        `output step for ${raw.session_id}#${raw.incarnation} on ${this.sessionId}#${this.serviceIncarnation}`,
      );
    const audio = decodeAudio(raw);
    if (audio !== null && raw.audio_chunk_seq === null)
      throw new VenusError('model_step_failed', 'field audio_chunk_seq is null on a step that carries audio');
    const gen = this.generationOf(raw);
    const delta = this.decoder.push(raw.total_token_ids);
    let text = delta.text;
    const speaking = delta.speak || audio !== null || text.length > 0 || (gen.utteranceId !== null && !delta.listen);
    let speaksPrefill: { attemptId: string } | undefined;
    if (speaking && gen.utteranceId === null && !gen.finished) {
      gen.utteranceId = `${gen.id}@${this.serviceIncarnation}`;
      const prefill = this.prefillByGeneration.get(gen.id);
      if (prefill) speaksPrefill = { attemptId: prefill.attemptId };
      this.remember(gen.utteranceId, prefill?.workId ?? '');
    }
    let audioChunkSeq = gen.nextAudioChunk;
    if (audio !== null && gen.utteranceId !== null && raw.audio_chunk_seq !== null) {
      audioChunkSeq = raw.audio_chunk_seq - 1;
      gen.nextAudioChunk = raw.audio_chunk_seq;
      const u = this.utterances.get(gen.utteranceId);
      if (u) u.chunkEndsMs.push((u.chunkEndsMs.at(-1) ?? 0) + pcmDurationMs(audio.length, 24_000));
    }
    const ends = raw.turn_finished || delta.turnEos;
    const turnFinished = ends && gen.utteranceId !== null && !gen.finished;
    if (ends) {
      text += this.decoder.flush();
      // As the official harness does at a turn's end: an unclosed delegate span is abandoned.
      this.decoder.reset();
      gen.finished = true;
    }
    const step: OutputStep = {
      stepSeq: at.stepSeq,
      chunk: at.chunk,
      inputSeqCutoff: at.inputSeqCutoff,
      decision: speaking && gen.utteranceId !== null ? 'speak' : 'listen',
      text: gen.utteranceId === null ? '' : text,
      utteranceId: gen.utteranceId,
      audio: gen.utteranceId === null ? null : audio,
      audioChunkSeq,
      turnFinished,
    };
    if (turnFinished)
      step.finishReason = /interrupt|cancel|barge/i.test(raw.finish_reason ?? '') ? 'interrupted' : 'completed';
    if (speaksPrefill) step.speaksPrefill = speaksPrefill;
    return step;
  }

  /**
   * The long-poll ran out (408): the model produced nothing in that window. Mid-utterance the turn
   * is still the assistant's, so the step keeps speaking with no new output instead of flapping.
   */
  noOutput(at: { chunk: number; inputSeqCutoff: number; stepSeq: number }): OutputStep {
    const gen = this.generation;
    const active = gen !== null && gen.utteranceId !== null && !gen.finished;
    return {
      stepSeq: at.stepSeq,
      chunk: at.chunk,
      inputSeqCutoff: at.inputSeqCutoff,
      decision: active ? 'speak' : 'listen',
      text: '',
      utteranceId: active ? gen.utteranceId : null,
      audio: null,
      audioChunkSeq: gen?.nextAudioChunk ?? 0,
      turnFinished: false,
    };
  }

  /**
   * Played milliseconds as the service counts them: whole audio chunks of that utterance heard, never
   * fewer than already reported (the service refuses a count that moves backwards). An utterance this
   * session never emitted counts in chunks of `fallbackChunkMs`.
   */
  playedChunks(utteranceId: string, playedMs: number, fallbackChunkMs: number): { chunks: number; workId: string } {
    const u = this.utterances.get(utteranceId);
    if (!u) return { chunks: Math.max(0, Math.floor(playedMs / fallbackChunkMs)), workId: '' };
    const heard = u.chunkEndsMs.filter((end) => end <= playedMs + 1).length;
    u.ackedChunks = Math.max(heard, u.ackedChunks);
    return { chunks: u.ackedChunks, workId: u.workId };
  }

  private generationOf(raw: ModelOutputStep): Generation {
    const current = this.generation;
    if (current !== null && current.id === raw.generation_id) return current;
    if (current !== null && raw.generation_epoch < current.epoch)
      throw new VenusError(
        'model_step_failed',
        `field generation_epoch went backwards (${current.epoch} -> ${raw.generation_epoch})`,
      );
    const gen: Generation = {
      id: raw.generation_id,
      epoch: raw.generation_epoch,
      utteranceId: null,
      finished: false,
      nextAudioChunk: 0,
    };
    this.generation = gen;
    return gen;
  }

  private remember(id: string, workId: string): void {
    this.utterances.set(id, { chunkEndsMs: [], ackedChunks: 0, workId });
    if (this.utterances.size > KEPT_UTTERANCES) {
      const oldest = this.utterances.keys().next().value;
      if (oldest !== undefined) this.utterances.delete(oldest);
    }
  }
}

function decodeAudio(raw: ModelOutputStep): Int16Array | null {
  const a = raw.audio;
  if (a === null) return null;
  if (typeof a === 'string') return base64ToPcm(a);
  const bad = (field: string, value: unknown, want: unknown) =>
    new VenusError('model_step_failed', `field audio.${field} is ${String(value)}; expected ${String(want)}`);
  if (a.format !== 'pcm_s16le') throw bad('format', a.format, 'pcm_s16le');
  if (a.sample_rate_hz !== 24_000) throw bad('sample_rate_hz', a.sample_rate_hz, 24_000);
  if (a.channels !== 1) throw bad('channels', a.channels, 1);
  if (a.sample_width_bytes !== 2) throw bad('sample_width_bytes', a.sample_width_bytes, 2);
  const bytes = Buffer.from(a.data, 'base64');
  if (bytes.byteLength % 2 !== 0) throw bad('data', `${bytes.byteLength} bytes`, 'whole 16-bit samples');
  return base64ToPcm(a.data);
}
