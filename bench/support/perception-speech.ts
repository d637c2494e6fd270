import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resamplePcm16 } from '@venus/gpu-worker';
import { speechClip } from '../../test/support/speech-clip.ts';

/** What the user says over the assistant, and what a listener would call it. */
export interface OverlapSpeech {
  cls: 'interruption' | 'backchannel' | 'other_directed' | 'background';
  text: string;
  /** 16 kHz mono, 300 ms of silence either side (as `speechClip` makes it). */
  pcm: Int16Array;
}

export interface PerceptionSpeech {
  /** Requests the user makes while the assistant is quiet (each makes it answer at length). */
  requests: Int16Array[];
  /** Speech over the assistant's answer, one of each class. */
  overlaps: OverlapSpeech[];
  /** The assistant's own voice at 24 kHz, for a stand-in synthesiser (what it says does not matter here). */
  assistant24k: Int16Array;
}

const REQUESTS = ['what is the weather in Paris', 'what time is it in Tokyo', 'what is the weather in London'];
const OVERLAPS: Array<Omit<OverlapSpeech, 'pcm'> & { voice: string; gainDb: number }> = [
  { cls: 'interruption', text: 'stop, actually make it Berlin', voice: 'en-us', gainDb: 0 },
  { cls: 'backchannel', text: 'mm-hm, yeah', voice: 'en-us', gainDb: -3 },
  { cls: 'other_directed', text: 'honey, where are my keys', voice: 'en-us', gainDb: -4 },
  { cls: 'background', text: 'and the game starts at eight tonight on channel four', voice: 'en-gb', gainDb: -16 },
];
const ASSISTANT_TEXT =
  'Let me check the weather in Paris. It may take a few seconds, so bear with me; meanwhile, feel free to ask me something else.';

/**
 * Real speech for the perception bench: eSpeak NG clips (the espeak-ng and sox binaries, as the
 * recogniser tests use) of requests, of one overlap of each class (the background at a lower level
 * in another voice), and of the assistant's voice.
 */
export function perceptionSpeech(): PerceptionSpeech {
  const dir = mkdtempSync(path.join(tmpdir(), 'venus-bench-perception-'));
  try {
    const requests = REQUESTS.map((text) => speechClip(dir, text));
    const overlaps = OVERLAPS.map(({ cls, text, voice, gainDb }) => ({
      cls,
      text,
      pcm: scale(speechClip(dir, text, voice), gainDb),
    }));
    const assistant24k = resamplePcm16(speechClip(dir, ASSISTANT_TEXT), 16_000, 24_000);
    return { requests, overlaps, assistant24k };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `pcm` scaled by `db` (negative: quieter). */
export function scale(pcm: Int16Array, db: number): Int16Array {
  const g = 10 ** (db / 20);
  return pcm.map((v) => Math.max(-32768, Math.min(32767, Math.round(v * g))));
}

/** A quiet room: low noise from a seeded generator, so runs are repeatable. */
export function roomNoise(samples: number, seed: number): Int16Array {
  const out = new Int16Array(samples);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < samples; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = ((s >>> 16) % 61) - 30;
  }
  return out;
}

/** Adds `src` (scaled by `gain`) into `dst` from `at`, clipping at full scale. */
export function mixInto(dst: Int16Array, src: Int16Array, at = 0, gain = 1): void {
  at = Math.round(at);
  for (let i = Math.max(0, -Math.round(at)); i < src.length && at + i < dst.length; i++) {
    dst[at + i] = Math.max(-32768, Math.min(32767, Math.round(dst[at + i]! + gain * src[i]!)));
  }
}

/** Median, p99 and mean of `values` (NaN when empty). */
export function summary(values: readonly number[]): { p50: number; p99: number; mean: number } {
  if (values.length === 0) return { p50: Number.NaN, p99: Number.NaN, mean: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: values.reduce((a, b) => a + b, 0) / values.length };
}
