import { describe, expect, it } from 'vitest';
import { WorkerToEdgeFrameSchema } from './relay-frames.ts';
import { hotWorkerFrame } from './relay-hot-frames.ts';

const AUDIO = {
  kind: 'assistant_audio',
  session: 'sess_1',
  utteranceId: 'utt_1',
  audioChunkSeq: 4,
  pcm24k: new Uint8Array([1, 2, 3, 4]),
};
const EVENT = {
  kind: 'timeline',
  session: 'sess_1',
  event: {
    session: 'sess_1',
    seq: 9,
    chunk: 4,
    atMs: 80,
    stream: 'assistant',
    type: 'assistant.audio',
    data: {
      utteranceId: 'utt_1',
      audioChunkSeq: 4,
      audio: { segmentId: 'a:4', track: 'assistant', offsetMs: 80, durationMs: 20, sampleRateHz: 24_000 },
      startMs: 80,
      durationMs: 20,
    },
  },
};

/** Every path to a leaf (and to each object) of a frame. */
function paths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return [prefix];
  return [prefix, ...Object.entries(value).flatMap(([key, v]) => paths(v, [...prefix, key]))];
}

function withValue(frame: object, path: string[], value: unknown): unknown {
  const copy = structuredClone(frame) as Record<string, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (value === DELETE) delete at[last];
  else at[last] = value;
  return copy;
}

const DELETE = Symbol('delete');
const REPLACEMENTS: unknown[] = [
  DELETE,
  undefined,
  null,
  '',
  'x',
  'assistant',
  'user',
  'assistant.text',
  0,
  -1,
  1.5,
  16_000,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  2 ** 53,
  true,
  [],
  {},
  new Uint8Array(2),
  [1, 2],
];

/** Key order too: the edge serialises the event it gets, so a reordered copy would change its output. */
const keyed = (value: unknown): unknown =>
  value instanceof Uint8Array
    ? [...value]
    : typeof value === 'object' && value !== null
      ? Object.entries(value).map(([k, v]) => [k, keyed(v)])
      : value;

describe('hot worker frames', () => {
  it('accept the two hot frames as the schema does: same keys, same order, samples copied', () => {
    for (const frame of [AUDIO, EVENT]) {
      const hot = hotWorkerFrame(frame);
      expect(hot).toBeDefined();
      expect(keyed(hot)).toEqual(keyed(WorkerToEdgeFrameSchema.parse(frame)));
    }
    const hot = hotWorkerFrame(AUDIO);
    if (hot?.kind !== 'assistant_audio') throw new Error('not taken');
    expect(hot.pcm24k).not.toBe(AUDIO.pcm24k);
    expect(hot.pcm24k.buffer.byteLength).toBe(4);
  });

  it('never take a frame the schema refuses, and give what the schema gives for every mutation they take', () => {
    let taken = 0;
    let refusedBySchema = 0;
    for (const frame of [AUDIO, EVENT]) {
      for (const path of paths(frame).filter((p) => p.length > 0)) {
        for (const value of REPLACEMENTS) {
          const mutated = withValue(frame, path, value);
          const hot = hotWorkerFrame(mutated);
          const parsed = WorkerToEdgeFrameSchema.safeParse(mutated);
          if (!parsed.success) refusedBySchema += 1;
          if (hot === undefined) continue;
          taken += 1;
          expect(parsed.success, `${path.join('.')} = ${String(value)}`).toBe(true);
          if (parsed.success) expect(keyed(hot)).toEqual(keyed(parsed.data));
        }
      }
    }
    expect(taken).toBeGreaterThan(0);
    expect(refusedBySchema).toBeGreaterThan(100);
  });

  it('leave other frames and other timeline events to the schema', () => {
    expect(hotWorkerFrame({ kind: 'closed', session: 's', reason: 'done' })).toBeUndefined();
    const text = {
      ...EVENT,
      event: { ...EVENT.event, type: 'assistant.text', data: { utteranceId: 'u', delta: 'hi' } },
    };
    expect(hotWorkerFrame(text)).toBeUndefined();
    expect(hotWorkerFrame(null)).toBeUndefined();
    expect(hotWorkerFrame([AUDIO])).toBeUndefined();
  });
});
