import { MessageChannel } from 'node:worker_threads';
import { DEMO_GRAMMAR, PocketSphinxRecogniser, resamplePcm16, SileroVad } from '@venus/gpu-worker';
import type { RecogniserFinal, RecogniserGrammar } from '@venus/protocol';
import { serveDuplexDialogues } from '../../gpu-worker/src/duplex-dialogue/serve-duplex-dialogues.ts';
import { OnnxOverlapHead } from '../../gpu-worker/src/perception/overlap-head.ts';
import { VAD_FRAME_MS } from '../../gpu-worker/src/perception/silero-vad.ts';
import { VoiceActivity } from '../../gpu-worker/src/perception/voice-activity.ts';
import { DialogueSession } from '../../gpu-worker/src/reference-model/dialogue-session.ts';
import type { Recording } from './recordings.ts';
import { scoreWords } from './words.ts';

const PAD = new Int16Array(16 * 300);

// ---- recogniser -------------------------------------------------------------------------------

export interface RecognitionResult {
  id: string;
  /** Grammar: the demo domain plus every recording's words as phrases (as a deployed function's examples would be). */
  withWords: { text: string; confidence: number; inGrammar: boolean; right: number; total: number; errors: number };
  /** Grammar: the demo domain alone, where these words are out of grammar: was it flagged? */
  demoOnly: { text: string; confidence: number; inGrammar: boolean };
}

/**
 * Each recording through the real recogniser (PocketSphinx wasm on its worker thread, behind the
 * recogniser port), one stream per grammar for all recordings in turn, as one session hears them.
 */
export async function checkRecognition(recordings: readonly Recording[]): Promise<RecognitionResult[]> {
  const phrases = recordings.flatMap((r) => (r.text ? [r.text] : []));
  const recogniser = await PocketSphinxRecogniser.start({ maxStreams: 2, maxBacklogMs: 600_000 });
  try {
    const withWords = await decodeAll(
      recogniser,
      { ...DEMO_GRAMMAR, phrases: [...DEMO_GRAMMAR.phrases, ...phrases] },
      recordings,
    );
    const demoOnly = await decodeAll(recogniser, DEMO_GRAMMAR, recordings);
    return recordings.map((r, i) => {
      const a = withWords[i]!;
      const b = demoOnly[i]!;
      const s = scoreWords(r.text ?? '', a.text);
      return {
        id: r.id,
        withWords: {
          text: a.text,
          confidence: a.confidence,
          inGrammar: a.inGrammar,
          right: s.right,
          total: s.total,
          errors: s.substitutions + s.deletions + s.insertions,
        },
        demoOnly: { text: b.text, confidence: b.confidence, inGrammar: b.inGrammar },
      };
    });
  } finally {
    await recogniser.close();
  }
}

async function decodeAll(
  recogniser: PocketSphinxRecogniser,
  grammar: RecogniserGrammar,
  recordings: readonly Recording[],
): Promise<RecogniserFinal[]> {
  const stream = await recogniser.open({ grammar });
  const finals: RecogniserFinal[] = [];
  const iterator = stream.events[Symbol.asyncIterator]();
  for (const r of recordings) {
    for (const pcm of [PAD, r.pcm, PAD])
      for (let at = 0; at < pcm.length; at += 320) stream.push(pcm.subarray(at, at + 320));
    stream.endUtterance();
    for (;;) {
      const next = await iterator.next();
      if (next.done) throw new Error('recogniser stream ended early');
      if (next.value.type === 'final') {
        finals.push(next.value);
        break;
      }
    }
  }
  await stream.close();
  return finals;
}

// ---- voice activity ---------------------------------------------------------------------------

export interface VadResult {
  id: string;
  /** Speech stretches the worker's voice activity found (onset and end rules as in sessions), ms into the recording. */
  segments: Array<[number, number]>;
  /** Frames at p >= 0.5, as a share of the recording's frames. */
  speechShare: number;
  maxProbability: number;
}

/** Each recording through Silero VAD and the worker's voice activity rules (300 ms of silence before, 600 ms after). */
export async function checkVad(recordings: readonly Recording[]): Promise<VadResult[]> {
  const vad = await SileroVad.create({ maxBatch: 1 });
  try {
    const out: VadResult[] = [];
    for (const r of recordings) {
      const voice = new VoiceActivity();
      voice.push(PAD);
      voice.push(r.pcm);
      voice.push(new Int16Array(16 * 600));
      const frames = voice.takeFrames();
      const probs = new Float32Array(frames.length);
      for (let i = 0; i < frames.length; i++) probs[i] = (await vad.run([voice.stream], [frames[i]!]))[0] ?? 0;
      const segments: Array<[number, number]> = [];
      let startedAt: number | null = null;
      frames.forEach((frame, i) => {
        const u = voice.update(probs.subarray(i, i + 1), [frame], false);
        const atMs = (i + 1) * VAD_FRAME_MS - PAD.length / 16;
        if (u.event?.state === 'started') startedAt = atMs - 2 * VAD_FRAME_MS;
        if (u.event?.state === 'stopped' && startedAt !== null) {
          segments.push([Math.max(0, startedAt), atMs - 500]);
          startedAt = null;
        }
      });
      let speech = 0;
      for (const p of probs) if (p >= 0.5) speech += 1;
      out.push({
        id: r.id,
        segments,
        speechShare: speech / Math.max(1, frames.length),
        maxProbability: probs.reduce((a, b) => Math.max(a, b), 0),
      });
    }
    return out;
  } finally {
    await vad.close();
  }
}

// ---- overlap verdict --------------------------------------------------------------------------

export interface OverlapResult {
  id: string;
  /** The assistant's voice in the microphone, dB relative to the recording's speech level; -Infinity: none (perfect echo cancellation). */
  assistantDb: number;
  /** What the worker did: stop (the user takes the floor) or continue, and the class it gave. */
  verdict: { action: string; cause: string } | null;
  /**
   * Verdicts while the assistant spoke before the recording began: bursts of the assistant's own
   * voice in the microphone. A burst already judged is not judged again, so the recording gets no
   * verdict of its own when its speech runs on from such a burst.
   */
  echoVerdicts: Array<{ action: string; cause: string }>;
  /** The VAD was already in a speech burst (the assistant's voice) when the recording began: its speech ran on in that burst. */
  inEchoBurst: boolean;
  /** Who decided: the trained head, or the v1 rules (no head, head not applicable to the session, or a failed head run). */
  judge: 'head' | 'rules' | null;
  /** From the recording's speech onset to the step that gave the verdict, audio ms (steps of 80 ms). */
  decisionMs: number | null;
  /** What the worker heard of the recording while the assistant spoke. */
  heard: string;
}

export interface OverlapCheckOptions {
  /** The assistant's voice (24 kHz), as a stand-in synthesiser says every reply. */
  assistant24k: Int16Array;
  /** Levels of the assistant's voice in the microphone, dB relative to the recording's speech (-Infinity: none). */
  assistantDbs: readonly number[];
  /** Real time (the recogniser's partials arrive as they would in a session), or as fast as possible. */
  realTime: boolean;
  /** Phrases the sessions' grammar adds to the demo domain (the recordings' words, as a function's examples). */
  phrases: readonly string[];
}

const STEP_MS = 80;
const REQUEST = 'what is the weather in Paris';

/**
 * Each recording as the user's speech over the assistant's, through the worker's own step
 * (`serveDuplexDialogues`: VAD, the recogniser on its thread, features, speech embedding, the
 * trained head or the v1 rules) and the reference dialogue. The session first hears the same
 * recording with the assistant quiet (so it knows this user's level, as the head requires), then
 * a typed request makes the assistant answer; 1 s into the answer the recording is played again,
 * over the assistant's voice at each level, and the first overlap verdict is read off the steps.
 */
export async function checkOverlap(
  recordings: readonly Recording[],
  vad: readonly VadResult[],
  o: OverlapCheckOptions,
): Promise<OverlapResult[]> {
  const recogniser = await PocketSphinxRecogniser.start({ maxStreams: 2 });
  const channel = new MessageChannel();
  const step = await serveDuplexDialogues<DialogueSession, never>(channel.port1, 8, () => {
    throw new Error('the real-voice check opens its sessions itself');
  });
  const headRuns = { ok: 0 };
  const score = OnnxOverlapHead.prototype.score;
  OnnxOverlapHead.prototype.score = function (this: OnnxOverlapHead, rows) {
    const result = score.call(this, rows);
    void result.then(
      () => {
        headRuns.ok += 1;
      },
      () => {},
    );
    return result;
  };
  const out: OverlapResult[] = [];
  try {
    for (const [i, r] of recordings.entries()) {
      const onsetMs = vad[i]?.segments[0]?.[0];
      if (!r.text || onsetMs === undefined) continue;
      for (const db of o.assistantDbs) {
        out.push(await overlapOnce(r, onsetMs, db, o, step, recogniser, headRuns));
      }
    }
  } finally {
    OnnxOverlapHead.prototype.score = score;
    const replied = new Promise<void>((resolve) => channel.port2.once('message', () => resolve()));
    channel.port2.postMessage({ t: 'shutdown', id: 1 });
    await Promise.race([replied, new Promise((res) => setTimeout(res, 5000))]);
    channel.port1.close();
    channel.port2.close();
    await recogniser.close();
  }
  return out;
}

async function overlapOnce(
  r: Recording,
  onsetMs: number,
  assistantDb: number,
  o: OverlapCheckOptions,
  step: Awaited<ReturnType<typeof serveDuplexDialogues<DialogueSession, never>>>,
  recogniser: PocketSphinxRecogniser,
  headRuns: { ok: number },
): Promise<OverlapResult> {
  const grammar = { ...DEMO_GRAMMAR, phrases: [...DEMO_GRAMMAR.phrases, ...o.phrases] };
  const d = new DialogueSession({
    sessionId: `real-voice-${r.id}-${assistantDb}`,
    incarnation: 0,
    synthesize: async () => o.assistant24k,
    recognise: () => recogniser.open({ grammar }),
  });
  const level = speechRms(r.pcm);
  const assistant16k = resamplePcm16(o.assistant24k, 24_000, 16_000);
  const echoGain = (level / Math.max(1, speechRms(assistant16k))) * 10 ** (assistantDb / 20);
  const samples = STEP_MS * 16;
  const contextAt = 300;
  const contextEnd = contextAt + r.pcm.length / 16;
  const typeAt = contextEnd + 1200;
  let overlapAt: number | null = null;
  let echo: Int16Array = new Int16Array(0);
  let speaking = false;
  let seq = 0;
  let verdict: OverlapResult['verdict'] = null;
  const echoVerdicts: OverlapResult['echoVerdicts'] = [];
  let burstSince: number | null = null;
  let inEchoBurst = false;
  let judge: OverlapResult['judge'] = null;
  let decisionMs: number | null = null;
  const heard: string[] = [];
  const started = performance.now();
  const limitMs = typeAt + 6000 + r.pcm.length / 16 + 3000;
  for (let k = 0; k * STEP_MS < limitMs; k++) {
    const t = k * STEP_MS;
    if (overlapAt !== null && t > overlapAt + r.pcm.length / 16 + 2500) break;
    const pcm = new Int16Array(samples);
    mix(pcm, r.pcm, (contextAt - t) * 16, 1);
    if (overlapAt !== null) mix(pcm, r.pcm, (overlapAt - t) * 16, 1);
    mix(pcm, echo, 0, echoGain);
    d.appendAudio(++seq, pcm);
    if (t >= typeAt && t - STEP_MS < typeAt) d.appendText(++seq, REQUEST);
    const headBefore = headRuns.ok;
    const applies = d.overlapHeadApplies;
    const outStep = await step(d, { chunk: k, inputSeqCutoff: seq, atMs: t + STEP_MS, assistantAudible: speaking });
    echo = outStep.audio ? resamplePcm16(outStep.audio, 24_000, 16_000) : new Int16Array(0);
    if (outStep.audio && overlapAt === null && t > typeAt) overlapAt = t + 1000;
    speaking = outStep.audio !== undefined;
    const said = outStep.interruption
      ? { action: outStep.interruption.action === 'continue' ? 'continue' : 'stop', cause: outStep.interruption.cause }
      : null;
    // The step that ends past the recording's speech onset has heard some of it.
    const onRecording = overlapAt !== null && t + STEP_MS > overlapAt + onsetMs;
    if (overlapAt !== null && t + STEP_MS > overlapAt)
      for (const u of outStep.userTranscripts ?? []) heard.push(u.text);
    if (overlapAt !== null && !onRecording && said) echoVerdicts.push(said);
    if (overlapAt !== null && onRecording && t < overlapAt + onsetMs && burstSince !== null)
      inEchoBurst = burstSince < overlapAt + onsetMs - STEP_MS;
    if (outStep.userSpeech?.state === 'started') burstSince = t;
    if (outStep.userSpeech?.state === 'stopped') burstSince = null;
    if (said && onRecording && overlapAt !== null && verdict === null) {
      verdict = said;
      judge = applies && headRuns.ok > headBefore ? 'head' : 'rules';
      decisionMs = t + STEP_MS - (overlapAt + onsetMs);
    }
    if (o.realTime) {
      const due = started + (k + 1) * STEP_MS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    } else await new Promise((res) => setTimeout(res, 15));
  }
  d.close();
  return { id: r.id, assistantDb, verdict, echoVerdicts, inEchoBurst, judge, decisionMs, heard: heard.join(' | ') };
}

function mix(dst: Int16Array, src: Int16Array, at: number, gain: number): void {
  const from = Math.round(at);
  for (let i = Math.max(0, -from); i < src.length && from + i < dst.length; i++) {
    dst[from + i] = Math.max(-32768, Math.min(32767, Math.round(dst[from + i]! + gain * src[i]!)));
  }
}

/** RMS of the louder half of 32 ms frames: the level of the speech, not of the pauses around it. */
function speechRms(pcm: Int16Array): number {
  const powers: number[] = [];
  for (let at = 0; at + 512 <= pcm.length; at += 512) {
    let sum = 0;
    for (let i = at; i < at + 512; i++) sum += pcm[i]! * pcm[i]!;
    powers.push(sum / 512);
  }
  powers.sort((a, b) => b - a);
  const top = powers.slice(0, Math.max(1, Math.ceil(powers.length / 2)));
  return Math.sqrt(top.reduce((a, b) => a + b, 0) / top.length);
}
