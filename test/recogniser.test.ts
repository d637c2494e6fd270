import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { DEMO_GRAMMAR, grammarWithFunctions, PocketSphinxRecogniser, wordsOf } from '@venus/gpu-worker';
import type { RecogniserEvent, RecogniserStream } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toFloat, toPcm16 } from '../eval/audio/signal.ts';
import { telephone } from '../training/mix.ts';
import { speechClip } from './support/speech-clip.ts';

/**
 * The PocketSphinx recogniser against real speech: the committed wasm and acoustic model, clips
 * synthesised by the eSpeak NG binary in two voices (sox to 16 kHz), streamed in 20 ms frames the
 * way a microphone delivers them. Word accuracy is asserted loosely (a regression in the build, the
 * model files or the grammar drops it far below); the scores are printed for the README's figures.
 */
const IN_GRAMMAR = [
  'what is the weather in Paris',
  'actually make it London',
  'what time is it in Tokyo',
  "how's the weather in Berlin",
  "what's the time in New York",
  'never mind',
  'stop',
  'wait',
  'yes',
  'is it raining in Rome',
];
const OUT_OF_GRAMMAR = [
  'the quick brown fox jumps over the lazy dog',
  'I would like to order a pizza with mushrooms',
  'please play some music by the beatles',
  'my sister bought a new bicycle last summer',
];
const VOICES = ['en-us', 'en'];

let dir: string;
let recogniser: PocketSphinxRecogniser;
const clips = new Map<string, Int16Array>();

function speak(text: string, voice: string): Int16Array {
  const key = `${voice}|${text}`;
  const pcm = clips.get(key) ?? speechClip(dir, text, voice);
  clips.set(key, pcm);
  return pcm;
}

/** Streams one clip in 20 ms frames, ends the utterance, and returns every event up to its final. */
async function recognise(stream: RecogniserStream, pcm: Int16Array): Promise<RecogniserEvent[]> {
  const events: RecogniserEvent[] = [];
  const collected = (async () => {
    for await (const event of stream.events) {
      events.push(event);
      if (event.type === 'final') return;
    }
  })();
  for (let at = 0; at < pcm.length; at += 320) stream.push(pcm.subarray(at, at + 320));
  stream.endUtterance();
  await collected;
  return events;
}

/** "what's" and "what is" are the same words: the grammar offers both, and WER should not tell them apart. */
function scoredWords(text: string): string[] {
  return wordsOf(text.replace(/\b(what|how)'s\b/gi, '$1 is'));
}

/** Word errors (substitutions + insertions + deletions) by edit distance. */
function wordErrors(reference: string[], hypothesis: string[]): number {
  let prev = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const row = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const sub = prev[j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      row.push(Math.min(sub, prev[j]! + 1, row[j - 1]! + 1));
    }
    prev = row;
  }
  return prev[hypothesis.length]!;
}

/** Says every in-grammar sentence in every voice (through `band`) and prints and returns the share of words right. */
async function wordAccuracy(
  stream: RecogniserStream,
  label: string,
  band: (pcm: Int16Array) => Int16Array,
): Promise<number> {
  let words = 0;
  let errors = 0;
  const lines: string[] = [];
  for (const voice of VOICES) {
    for (const text of IN_GRAMMAR) {
      const final = (await recognise(stream, band(speak(text, voice)))).at(-1)!;
      expect(final.type).toBe('final');
      const reference = scoredWords(text);
      words += reference.length;
      const e = wordErrors(reference, scoredWords(final.text));
      errors += e;
      if (final.type === 'final')
        lines.push(
          `${label}${voice} | ${text} -> ${final.text} (score ${final.score.toFixed(1)}, confidence ${final.confidence.toFixed(2)}, errors ${e})`,
        );
    }
  }
  console.log(
    `${lines.join('\n')}\n${label}word accuracy ${(100 * (1 - errors / words)).toFixed(1)}% (${words - errors}/${words})`,
  );
  return 1 - errors / words;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'venus-recogniser-'));
  recogniser = await PocketSphinxRecogniser.start({ maxStreams: 4 });
}, 60_000);

afterAll(async () => {
  await recogniser?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('PocketSphinx recogniser (wasm, eSpeak NG voices)', () => {
  it('recognises in-grammar sentences from two voices with at least 80% of words right', async () => {
    const stream = await recogniser.open({ grammar: DEMO_GRAMMAR });
    expect(stream.unknownWords).toEqual([]);
    expect(await wordAccuracy(stream, '', (pcm) => pcm)).toBeGreaterThanOrEqual(0.8);
    await stream.close();
  }, 120_000);

  it('recognises the same sentences through the 8 kHz telephone band (mu-law round trip), through the telephone map', async () => {
    // A fresh stream: its band is decided from its own first speech.
    const stream = await recogniser.open({ grammar: DEMO_GRAMMAR });
    const narrow = (pcm: Int16Array) => {
      const clean = toFloat(pcm);
      return toPcm16(telephone(clean).subarray(0, clean.length));
    };
    expect(await wordAccuracy(stream, 'telephone-band ', narrow)).toBeGreaterThanOrEqual(0.7);
    await stream.close();
  }, 120_000);

  it('streams partial hypotheses before the final, from a worker thread', async () => {
    const stream = await recogniser.open({ grammar: DEMO_GRAMMAR });
    const events = await recognise(stream, speak('what is the weather in Paris', 'en-us'));
    const partials = events.filter((e) => e.type === 'partial');
    // Several partials (the words arrive one by one), each before the single final, growing in audio.
    expect(partials.length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)?.type).toBe('final');
    expect(events.filter((e) => e.type === 'final')).toHaveLength(1);
    expect(partials[0]!.audioMs).toBeLessThan(events.at(-1)!.audioMs);
    expect(partials[0]!.text.split(' ').length).toBeLessThan(6);
    expect(recogniser.threadId).not.toBe(threadId);
    await stream.close();
  }, 60_000);

  it('flags clearly out-of-grammar speech as not in the grammar more often than in-grammar speech', async () => {
    const stream = await recogniser.open({ grammar: DEMO_GRAMMAR });
    const rate = async (texts: string[]) => {
      let flagged = 0;
      for (const voice of VOICES) {
        for (const text of texts) {
          const final = (await recognise(stream, speak(text, voice))).at(-1)!;
          if (final.type === 'final' && !final.inGrammar) flagged += 1;
          if (final.type === 'final')
            console.log(
              `${voice} | ${text} -> ${final.text} (score ${final.score.toFixed(1)}, inGrammar ${final.inGrammar})`,
            );
        }
      }
      return flagged / (texts.length * VOICES.length);
    };
    const rejected = await rate(OUT_OF_GRAMMAR);
    const falselyRejected = await rate(IN_GRAMMAR);
    console.log(
      `out-of-grammar rejected ${(100 * rejected).toFixed(0)}%, in-grammar rejected ${(100 * falselyRejected).toFixed(0)}%`,
    );
    expect(rejected).toBeGreaterThanOrEqual(0.5);
    expect(falselyRejected).toBeLessThanOrEqual(0.3);
    await stream.close();
  }, 120_000);

  it("extends the grammar with a function's examples and reports words it cannot pronounce", async () => {
    // "umbrella", "need" and "do" are not demo words: CMUdict (shipped compressed) pronounces them.
    const grammar = grammarWithFunctions([
      { examples: ['do I need an umbrella in Seattle', 'what time is it in Zqxville'], keywords: ['forecast'] },
    ]);
    const stream = await recogniser.open({ grammar });
    expect(stream.unknownWords).toEqual(['zqxville']);
    await recognise(stream, speak('wait', 'en-us'));
    const final = (await recognise(stream, speak('do I need an umbrella in Seattle', 'en-us'))).at(-1)!;
    expect(final.text).toContain('umbrella in seattle');
    await stream.close();
  }, 60_000);

  it('refuses audio on a closed stream and streams beyond its bound', async () => {
    const small = await PocketSphinxRecogniser.start({ maxStreams: 1 });
    try {
      const stream = await small.open({ grammar: DEMO_GRAMMAR });
      await expect(small.open({ grammar: DEMO_GRAMMAR })).rejects.toMatchObject({ code: 'rate_limited' });
      await stream.close();
      expect(() => stream.push(new Int16Array(320))).toThrow(expect.objectContaining({ code: 'session_closed' }));
    } finally {
      await small.close();
    }
  }, 60_000);
});
