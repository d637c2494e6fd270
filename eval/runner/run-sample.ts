import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { resamplePcm16 } from '@venus/gpu-worker';
import { EVAL_RATE_HZ, writeWav } from '../audio/wav-io.ts';
import type { Sample } from '../scenarios/scenario.ts';
import { EvalClient, type EvalTarget, wireRateHz } from './eval-client.ts';

export interface RunSampleOptions {
  /** Microphone frame length (20–100 ms). Default 40. */
  frameMs?: number;
  /** Send the sample's transcript events (a client-side ASR). Default true. */
  transcripts?: boolean;
  /** After the input ends, keep the microphone open (silence) until idle this long… */
  idleMs?: number;
  /** …but no longer than this. */
  maxExtraMs?: number;
}

export interface SampleRun {
  key: string;
  outDir: string;
  inputS: number;
  totalS: number;
  events: number;
  errors: string[];
}

/** `playout.json`: what the client played, when, and what it sent besides audio. */
export interface PlayoutRecord {
  frameMs: number;
  inputS: number;
  totalS: number;
  venus: boolean;
  items: ReturnType<EvalClient['speaker']['items']>;
  transcripts: { t: number; text: string }[];
}

/**
 * Streams one sample through a realtime endpoint in real time and records the result under
 * `outDir`: `output.wav` (16 kHz, the assistant as the user heard it, on the input's clock),
 * `events.jsonl` (every server event and every non-audio client event, with client time `t` in ms)
 * and `playout.json`. A microphone frame covering [t, t + frame) is sent at t + frame, as a live
 * microphone delivers it; transcript events go out at their scheduled times.
 */
export async function runSample(
  sample: Sample,
  target: EvalTarget,
  outDir: string,
  options: RunSampleOptions = {},
): Promise<SampleRun> {
  const frameMs = Math.min(100, Math.max(20, options.frameMs ?? 40));
  const idleMs = options.idleMs ?? 1500;
  const maxExtraMs = options.maxExtraMs ?? 12_000;
  const { venus_eval: plan } = sample.meta;
  const wireRate = wireRateHz(target);
  const wire = resamplePcm16(sample.input, EVAL_RATE_HZ, wireRate);
  const frame = (wireRate * frameMs) / 1000;
  const inputFrames = Math.ceil(wire.length / frame);
  const client = await EvalClient.connect(target);
  const sent: { t: number; text: string }[] = [];
  const timers: NodeJS.Timeout[] = [];
  try {
    client.start();
    if (options.transcripts !== false) {
      for (const tr of plan.transcripts) {
        timers.push(
          setTimeout(() => {
            sent.push({ t: client.now(), text: tr.text });
            client.sendText(tr.text);
          }, tr.at * 1000),
        );
      }
    }
    const silence = new Int16Array(frame);
    let n = 0;
    for (;;) {
      const due = (n + 1) * frameMs;
      const wait = due - client.now();
      if (wait > 0) await sleep(wait);
      const part = n < inputFrames ? wire.subarray(n * frame, (n + 1) * frame) : silence;
      client.sendAudio(part.length === frame ? part : padded(part, frame));
      n += 1;
      if (n < inputFrames) continue;
      const extra = (n - inputFrames) * frameMs;
      if (extra >= maxExtraMs || (extra > 0 && client.isIdle(idleMs))) break;
    }
  } finally {
    for (const t of timers) clearTimeout(t);
    await client.close();
  }
  const totalMs = Math.max(client.now(), client.speaker.endMs());
  mkdirSync(outDir, { recursive: true });
  writeWav(path.join(outDir, 'output.wav'), client.speaker.render(totalMs));
  writeFileSync(path.join(outDir, 'events.jsonl'), `${client.log.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const record: PlayoutRecord = {
    frameMs,
    inputS: sample.input.length / EVAL_RATE_HZ,
    totalS: totalMs / 1000,
    venus: client.venus,
    items: client.speaker.items(),
    transcripts: sent,
  };
  writeFileSync(path.join(outDir, 'playout.json'), `${JSON.stringify(record, null, 1)}\n`);
  const errors = client.log
    .filter((e) => e.dir === 'in' && e.event.type === 'error')
    .map((e) => JSON.stringify((e.event as { error?: unknown }).error ?? e.event).slice(0, 200));
  return {
    key: `${plan.set}/${plan.id}`,
    outDir,
    inputS: record.inputS,
    totalS: record.totalS,
    events: client.log.length,
    errors,
  };
}

function padded(part: Int16Array, length: number): Int16Array {
  const out = new Int16Array(length);
  out.set(part);
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
