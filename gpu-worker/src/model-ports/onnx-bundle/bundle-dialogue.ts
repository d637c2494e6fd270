import type { ContextEntry, OutputStep, PrefillAck, PrefillRequest, SpokenSegment, StepRequest } from '@venus/protocol';
import { concatPcm } from '@venus/protocol';
import { InputFence } from '../../duplex-dialogue/input-fence.ts';
import { listenStep } from '../../duplex-dialogue/output-step.ts';
import { PrefillLedger } from '../../duplex-dialogue/prefill-ledger.ts';
import { type CheckpointTokenizer, TokenStreamDecoder } from '../official-service/token-decoder.ts';
import type { BundleManifest } from './bundle-manifest.ts';
import type { KvCache } from './components/causal-decoder.ts';

/** One piece of a step's new context, in input order. */
export type InputSegment = { kind: 'tokens'; ids: number[] } | { kind: 'audio'; frames: Float32Array; count: number };

type Queued = { kind: 'audio'; pcm: Int16Array } | { kind: 'tokens'; ids: number[] };

/** Protocol roles the host acts on, as token ids of this bundle's tokenizer. */
export interface RoleIds {
  listen: number;
  speak: number;
  turnEos: number;
  delegateOpen: number;
  delegateClose: number;
  /** Every special token of the manifest (never part of typed text, never spoken). */
  special: ReadonlySet<number>;
}

export interface BundleDialogueOptions {
  sessionId: string;
  incarnation: number;
  manifest: BundleManifest;
  tokenizer: CheckpointTokenizer;
  roles: RoleIds;
  cache: KvCache;
  frameSamples: number;
}

/** Silence after speech before `userSpeech` reports it stopped. */
const SPEECH_HANGOVER_MS = 320;

/**
 * The host side of one bundle session, next to its KV cache: it orders inputs behind their fences,
 * turns text and prefills into tokens through the manifest's templates, frames microphone audio for
 * the encoder, reads the tokens the model generates (`<|speak|>` opens an utterance, `<|turn_eos|>`
 * closes it, delegate spans are text but never speech) and assembles one OutputStep per chunk.
 *
 * @example
 *   const d = new BundleDialogue({ sessionId: 's1', incarnation: 0, manifest, tokenizer, roles, cache, frameSamples });
 *   d.appendText(1, 'hello');
 *   const segments = d.takeInputs(1); // tokens of "<|user|>hello<|end_user|>"
 */
export class BundleDialogue {
  readonly cache: KvCache;
  private readonly queue = new InputFence<Queued>();
  private readonly audio: Float32Array;
  private audioFill = 0;
  private readonly attempts = new PrefillLedger();
  private readonly text: TokenStreamDecoder;
  /** The last generated token, fed at the start of the next step. */
  private carry: number | null = null;
  private stepSeq = 0;
  private audioChunkSeq = 0;
  private utterances = 0;
  private utterance: {
    id: string;
    ended: boolean;
    emittedSamples: number;
    segments: SpokenSegment[];
    reported: number;
  } | null = null;
  private insideDelegate = false;
  private pendingSpeakPrefill: string | null = null;
  private userSpeaking = false;
  private silentMs = 0;
  private pendingAudio: Int16Array[] = [];
  // Per-step state.
  private step: {
    request: StepRequest;
    tokens: number;
    text: string;
    spoken: number[];
    utteranceId: string | null;
    startedUtterance: boolean;
    speaksPrefill: string | null;
  } | null = null;

  constructor(private readonly opts: BundleDialogueOptions) {
    this.cache = opts.cache;
    this.audio = new Float32Array(opts.frameSamples);
    const r = opts.roles;
    const names: Record<string, number> = {
      '<|listen|>': r.listen,
      '<|speak|>': r.speak,
      '<|turn_eos|>': r.turnEos,
      '<delegate>': r.delegateOpen,
      '</delegate>': r.delegateClose,
    };
    // Other special tokens of the bundle are structure: the decoder drops them from text.
    for (const id of r.special) if (!Object.values(names).includes(id)) names[`#${id}`] = id;
    this.text = new TokenStreamDecoder(opts.tokenizer, names);
  }

  get sessionId(): string {
    return this.opts.sessionId;
  }

  appendAudio(inputSeq: number, pcm: Int16Array): void {
    this.queue.push(inputSeq, { kind: 'audio', pcm });
  }

  appendText(inputSeq: number, text: string): void {
    // Typed text never smuggles protocol tokens into the context.
    const ids = this.opts.tokenizer.encode(text.normalize('NFC')).filter((id) => !this.opts.roles.special.has(id));
    const [before, after] = this.opts.manifest.templates.userText.split('{text}') as [string, string];
    this.queue.push(inputSeq, { kind: 'tokens', ids: [...this.encode(before), ...ids, ...this.encode(after)] });
  }

  /**
   * Restored history the bundle's templates can express: a `backend` entry (a restored function
   * call and its output) as a silent prefill. A user, assistant or system message has no template
   * that keeps the model from answering it; the port refuses those (`historyRoles`).
   */
  appendHistory(inputSeq: number, entry: ContextEntry): void {
    if (entry.role !== 'backend') return;
    const text = this.opts.manifest.templates.prefillSilent.replace('{text}', entry.text);
    this.queue.push(inputSeq, { kind: 'tokens', ids: this.encode(text) });
  }

  prefill(request: PrefillRequest): PrefillAck {
    if (!this.attempts.admit(request.attemptId)) return { attemptId: request.attemptId, deduplicated: true };
    const { templates } = this.opts.manifest;
    const template = request.mode === 'speak' ? templates.prefillSpeak : templates.prefillSilent;
    this.queue.push(null, { kind: 'tokens', ids: this.encode(template.replace('{text}', request.text)) });
    if (request.mode === 'speak') this.pendingSpeakPrefill = request.attemptId;
    return { attemptId: request.attemptId, deduplicated: false };
  }

  /**
   * A final acknowledgement short of what was emitted means the utterance was cut: stop generating
   * it. The bundle's context is its KV cache, which holds every token it generated; the host's
   * `heardText` cannot take tokens back out of it, so the cut is what the model learns.
   */
  playbackAck(utteranceId: string, playedMs: number, final: boolean): void {
    const u = this.utterance;
    if (!final || !u || u.id !== utteranceId) return;
    if (playedMs + 1 < (u.emittedSamples / 24_000) * 1000) this.stopUtterance();
  }

  cancelResponse(): void {
    if (this.utterance) this.stopUtterance();
  }

  /** New context for the step at `cutoff`: the carried token, then every eligible input in order. */
  takeInputs(cutoff: number): InputSegment[] {
    const segments: InputSegment[] = [];
    if (this.carry !== null) segments.push({ kind: 'tokens', ids: [this.carry] });
    this.carry = null;
    for (const q of this.queue.take(cutoff)) {
      if (q.kind === 'tokens') {
        if (q.ids.length > 0) segments.push({ kind: 'tokens', ids: q.ids });
        continue;
      }
      const frames = this.frame(q.pcm);
      if (frames) segments.push(frames);
    }
    return segments;
  }

  beginStep(request: StepRequest): void {
    this.step = {
      request,
      tokens: 0,
      text: '',
      spoken: [],
      utteranceId: this.utterance?.id ?? null,
      startedUtterance: false,
      speaksPrefill: null,
    };
  }

  /** Takes one generated token; returns whether decoding continues within this chunk. */
  absorb(token: number): boolean {
    const s = this.step;
    if (!s) return false;
    s.tokens += 1;
    this.carry = token;
    const r = this.opts.roles;
    if (token === r.speak) {
      if (!this.utterance || this.utterance.ended) this.startUtterance();
    } else if (token === r.turnEos) {
      if (this.utterance && !this.utterance.ended) {
        s.text += this.text.push([token]).text + this.text.flush();
        this.utterance.ended = true;
      }
      return false;
    } else if (token === r.listen) {
      return false;
    } else {
      if (!this.utterance || this.utterance.ended) this.startUtterance();
      s.text += this.text.push([token]).text;
      if (token === r.delegateOpen) this.insideDelegate = true;
      else if (token === r.delegateClose) this.insideDelegate = false;
      else if (!this.insideDelegate && !r.special.has(token) && this.isWordy(token)) s.spoken.push(token);
    }
    return s.tokens < this.opts.manifest.decoding.maxTokensPerChunk;
  }

  /** Tokens of this step to synthesise. */
  get spokenTokens(): readonly number[] {
    return this.step?.spoken ?? [];
  }

  finishStep(speech: Float32Array | null, speechProbabilities: Float32Array | null): OutputStep {
    const s = this.step;
    if (!s) throw new Error('finishStep without beginStep');
    this.step = null;
    const u = this.utterance;
    if (speech && speech.length > 0) {
      this.pendingAudio.push(toPcm16(speech));
      // The speech head voices each token as it is generated, so this step's words and their length are known now.
      const text = this.opts.tokenizer.decode(s.spoken).trim();
      if (u && text) u.segments.push({ text, durationMs: speech.length / 24 });
    }
    const out = listenStep(++this.stepSeq, s.request, this.audioChunkSeq);
    const userSpeech = this.updateUserSpeech(speechProbabilities);
    if (userSpeech) out.userSpeech = userSpeech;
    if (!u) return out;
    out.decision = 'speak';
    out.utteranceId = u.id;
    out.text = s.text;
    const audio = this.takeAudio();
    if (audio) {
      out.audio = audio;
      out.audioChunkSeq = this.audioChunkSeq++;
      u.emittedSamples += audio.length;
    }
    if (s.startedUtterance && s.speaksPrefill) out.speaksPrefill = { attemptId: s.speaksPrefill };
    if (u.segments.length > u.reported) {
      out.spokenSegments = u.segments.slice(u.reported);
      u.reported = u.segments.length;
    }
    if (u.ended && this.pendingAudio.length === 0) {
      out.turnFinished = true;
      out.finishReason = 'completed';
      this.utterance = null;
    }
    return out;
  }

  private startUtterance(): void {
    const s = this.step;
    // Audio still queued from an utterance that ended gives way to the new one.
    this.pendingAudio = [];
    this.text.reset();
    this.insideDelegate = false;
    this.utterance = {
      id: `${this.opts.sessionId}-${this.opts.incarnation}-u${++this.utterances}`,
      ended: false,
      emittedSamples: 0,
      segments: [],
      reported: 0,
    };
    if (s) {
      s.utteranceId = this.utterance.id;
      s.startedUtterance = true;
      s.speaksPrefill = this.pendingSpeakPrefill;
      s.text = '';
      s.spoken = [];
    }
    this.pendingSpeakPrefill = null;
  }

  private stopUtterance(): void {
    this.utterance = null;
    this.pendingAudio = [];
    this.text.reset();
    this.insideDelegate = false;
    // The model learns that its turn ended here: its context continues with <|turn_eos|>.
    const ids = this.carry === null ? [this.opts.roles.turnEos] : [this.carry, this.opts.roles.turnEos];
    this.carry = null;
    this.queue.unshift({ kind: 'tokens', ids });
  }

  private takeAudio(): Int16Array | null {
    const limit = (this.opts.manifest.decoding.chunkMs * 24_000) / 1000;
    if (this.pendingAudio.length === 0) return null;
    const all = concatPcm(this.pendingAudio);
    this.pendingAudio = all.length > limit ? [all.slice(limit)] : [];
    return all.length > limit ? all.slice(0, limit) : all;
  }

  private updateUserSpeech(probabilities: Float32Array | null): OutputStep['userSpeech'] | undefined {
    if (!probabilities || probabilities.length === 0) return undefined;
    const frameMs = this.opts.frameSamples / 16;
    let change: OutputStep['userSpeech'] | undefined;
    for (const p of probabilities) {
      if (p >= 0.5) {
        this.silentMs = 0;
        if (!this.userSpeaking) {
          this.userSpeaking = true;
          change = { state: 'started', probability: p };
        }
      } else if (this.userSpeaking) {
        this.silentMs += frameMs;
        if (this.silentMs >= SPEECH_HANGOVER_MS) {
          this.userSpeaking = false;
          change = { state: 'stopped', probability: p };
        }
      }
    }
    return change;
  }

  private frame(pcm: Int16Array): InputSegment | null {
    const size = this.opts.frameSamples;
    const count = Math.floor((this.audioFill + pcm.length) / size);
    const frames = new Float32Array(count * size);
    let at = 0;
    let read = 0;
    if (count > 0) {
      frames.set(this.audio.subarray(0, this.audioFill));
      at = this.audioFill;
      for (; at < frames.length; at++, read++) frames[at] = pcm[read]! / 32_768;
      this.audioFill = 0;
    }
    for (; read < pcm.length; read++) this.audio[this.audioFill++] = pcm[read]! / 32_768;
    return count > 0 ? { kind: 'audio', frames, count } : null;
  }

  private encode(text: string): number[] {
    return text.length === 0 ? [] : this.opts.tokenizer.encode(text);
  }

  private isWordy(token: number): boolean {
    return /[\p{L}\p{N}]/u.test(this.opts.tokenizer.decode([token]));
  }
}

function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = Math.round(Math.max(-1, Math.min(1, samples[i]!)) * 32_767);
  return out;
}
