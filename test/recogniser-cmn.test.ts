import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_GRAMMAR, wordsOf } from '@venus/gpu-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileGrammar } from '../gpu-worker/src/perception/pocketsphinx/grammar-from-vocabulary.ts';
import {
  CEPSTRA,
  CepstralMeanEstimate,
  MODEL_DIR,
  PocketSphinxWasm,
} from '../gpu-worker/src/perception/pocketsphinx/pocketsphinx-wasm.ts';
import { Pronunciations } from '../gpu-worker/src/perception/pocketsphinx/pronunciations.ts';
import { DECODER_OPTIONS } from '../gpu-worker/src/perception/pocketsphinx/recogniser-protocol.ts';
import {
  SECOND_PASS_BELOW_CONFIDENCE,
  StreamDecoder,
} from '../gpu-worker/src/perception/pocketsphinx/stream-decoder.ts';
import { TelephoneMap } from '../gpu-worker/src/perception/pocketsphinx/telephone-band.ts';
import { speechClip } from './support/speech-clip.ts';

/**
 * The recogniser's cepstral mean (live CMN): the committed wasm's shim sets and reads it, and a
 * fresh decoder started from an utterance's own mean (what the recogniser thread does with a
 * stream's first utterance) hears first utterances at least as well as one started from the
 * model's prior. Real eSpeak NG speech, the committed acoustic model.
 */
const SENTENCES = [
  'what is the weather in Paris',
  'what time is it in Tokyo',
  "how's the weather in Berlin",
  'is it raining in Rome',
  'what is the weather like in Madrid tomorrow',
  'tell me the time in Sydney',
];

let ps: PocketSphinxWasm;
let dir: string;
let open: () => number;

beforeAll(async () => {
  ps = await PocketSphinxWasm.load();
  dir = mkdtempSync(path.join(tmpdir(), 'venus-cmn-'));
  const pronunciations = Pronunciations.load(MODEL_DIR);
  const grammar = compileGrammar(DEMO_GRAMMAR, (w) => pronunciations.has(w));
  const dictionary = pronunciations.dictionaryFor(grammar.words);
  open = () => ps.openGrammar(grammar.jsgf, DECODER_OPTIONS, dictionary);
}, 60_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The model's prior mean, as feat.params gives it. */
function priorMean(): number[] {
  const params = readFileSync(fileURLToPath(new URL('en-us/feat.params', MODEL_DIR)), 'utf8');
  const line = /^-cmninit (.+)$/m.exec(params);
  if (!line) throw new Error('feat.params has no -cmninit');
  return line[1]!.split(',').map(Number);
}

/** A fresh decoder's final for `pcm` as its first utterance, its mean set from `pcm` first when `ownMean`. */
function firstUtterance(pcm: Int16Array, ownMean: boolean): string {
  const h = open();
  try {
    if (ownMean) {
      const estimate = new CepstralMeanEstimate();
      estimate.add(ps.cepstra(h, pcm, true, true));
      const mean = estimate.mean();
      if (mean === null) throw new Error('no speech frames');
      ps.setCepstralMean(h, mean);
    }
    ps.start(h);
    ps.process(h, pcm);
    ps.end(h);
    return ps.hypothesis(h).text;
  } finally {
    ps.free(h);
  }
}

describe('cepstral mean of the PocketSphinx decoder', () => {
  it("starts from the model's prior and reads back what was set", () => {
    const h = open();
    try {
      const prior = priorMean();
      expect(prior).toHaveLength(CEPSTRA);
      expect([...ps.cepstralMeanOf(h)].map((v) => Number(v.toFixed(2)))).toEqual(prior);
      const mean = Float32Array.from({ length: CEPSTRA }, (_, i) => 50 - i * 1.5);
      ps.setCepstralMean(h, mean);
      expect([...ps.cepstralMeanOf(h)]).toEqual([...mean]);
      expect(() => ps.setCepstralMean(h, new Float32Array(3))).toThrow(/13 values, got 3/);
    } finally {
      ps.free(h);
    }
  });

  it('averages only the frames live CMN counts (c0 at least 0), and has no mean without one', () => {
    const frame = (c0: number, rest: number) => [c0, ...Array.from({ length: CEPSTRA - 1 }, () => rest)];
    const estimate = new CepstralMeanEstimate();
    estimate.add(Float32Array.from(frame(-3, 1)));
    expect(estimate.mean()).toBeNull();
    estimate.add(Float32Array.from([...frame(40, 2), ...frame(-1, 100)]));
    estimate.add(Float32Array.from(frame(60, 4)));
    const mean = estimate.mean()!;
    expect(estimate.frames).toBe(2);
    expect(mean[0]).toBe(50);
    expect(mean[CEPSTRA - 1]).toBe(3);
  });

  it("adapts from the set mean toward the voice's as utterances are decoded", () => {
    const h = open();
    try {
      const pcm = speechClip(dir, SENTENCES[0]!, 'en-us');
      const estimate = new CepstralMeanEstimate();
      estimate.add(ps.cepstra(h, pcm, true, true));
      const own = estimate.mean()!;
      const far = own.map((v) => v + 10);
      ps.setCepstralMean(h, far);
      ps.start(h);
      ps.process(h, pcm);
      ps.end(h);
      const after = ps.cepstralMeanOf(h);
      // Live CMN weighs the set mean as 500 frames and adds the utterance's: c0 moved toward the voice's.
      expect(Math.abs(after[0]! - own[0]!)).toBeLessThan(Math.abs(far[0]! - own[0]!));
    } finally {
      ps.free(h);
    }
  });

  it("hears a fresh decoder's first utterance at least as well from the utterance's own mean as from the prior", () => {
    let ownRight = 0;
    let priorRight = 0;
    let words = 0;
    const lines: string[] = [];
    for (const voice of ['en-us', 'en-gb-x-rp+f2']) {
      for (const text of SENTENCES) {
        const pcm = speechClip(dir, text, voice);
        const reference = wordsOf(text.replace(/\b(how)'s\b/gi, '$1 is'));
        const right = (heard: string) => {
          const got = new Set(wordsOf(heard.replace(/\b(what|how)'s\b/gi, '$1 is')));
          return reference.filter((w) => got.has(w)).length;
        };
        const own = firstUtterance(pcm, true);
        const prior = firstUtterance(pcm, false);
        ownRight += right(own);
        priorRight += right(prior);
        words += reference.length;
        lines.push(`${voice} | ${text} -> own mean: ${own} | prior: ${prior}`);
      }
    }
    console.log(`${lines.join('\n')}\nwords right: own mean ${ownRight}/${words}, prior ${priorRight}/${words}`);
    expect(ownRight).toBeGreaterThanOrEqual(priorRight);
    // A loose floor (54/74 when written; these clips are eSpeak's default level with silence either side).
    expect(ownRight / words).toBeGreaterThanOrEqual(0.65);
  }, 60_000);

  it("StreamDecoder holds a fresh stream's first second, starts from its own mean, then hears it", () => {
    const h = open();
    const stream = new StreamDecoder(ps, TelephoneMap.load(), h);
    const pcm = speechClip(dir, SENTENCES[4]!, 'en-us');
    const prior = [...ps.cepstralMeanOf(h)];
    let started: { held: number; mean: number[] } | null = null;
    let partials = 0;
    // 160 ms pieces: nothing is decoded (the mean stays the prior, no partial) before a second is held.
    for (let at = 0; at < pcm.length; at += 2560) {
      const partial = stream.push(pcm.subarray(at, at + 2560));
      const held = Math.min(pcm.length, at + 2560);
      const mean = [...ps.cepstralMeanOf(h)];
      if (held < 16_000) {
        expect(partial).toBeNull();
        expect(mean).toEqual(prior);
      } else started ??= { held, mean };
      if (partial) partials += 1;
    }
    // Decoding began from the mean of the held audio's own cepstra (live CMN leaves it alone until
    // 800 frames), not from the prior.
    const own = new CepstralMeanEstimate();
    own.add(ps.cepstra(h, pcm.subarray(0, started!.held), true, true));
    const expected = [...own.mean()!];
    for (const [i, v] of started!.mean.entries()) expect(v).toBeCloseTo(expected[i]!, 3);
    expect(Math.abs(started!.mean[0]! - prior[0]!)).toBeGreaterThan(5);
    const final = stream.end()!;
    expect(partials).toBeGreaterThan(0);
    expect(final).toMatchObject({ type: 'final', utterance: 0 });
    expect(final.text).toContain('madrid');
    stream.free();
  });

  it("StreamDecoder decodes a stream's first utterance a second time only when the first decoding is unsure", () => {
    /** Decoder starts (one per decoding of an utterance) for `text` as a fresh stream's first utterance. */
    const decodings = (text: string) => {
      const h = open();
      let starts = 0;
      // The real module, with its start counted.
      const counted = Object.create(ps) as PocketSphinxWasm;
      counted.start = (handle: number) => {
        starts += 1;
        ps.start(handle);
      };
      const stream = new StreamDecoder(counted, TelephoneMap.load(), h);
      const pcm = speechClip(dir, text, 'en-us');
      for (let at = 0; at < pcm.length; at += 2560) stream.push(pcm.subarray(at, at + 2560));
      const final = stream.end()!;
      stream.free();
      return { starts, final };
    };
    const sure = decodings(SENTENCES[4]!);
    expect(sure.final.text).toContain('madrid');
    expect(sure.final.confidence).toBeGreaterThanOrEqual(SECOND_PASS_BELOW_CONFIDENCE);
    expect(sure.starts).toBe(1);
    // Speech the demo grammar does not hold scores low: decoded again at its end.
    const unsure = decodings('the quick brown fox jumps over the lazy dog');
    expect(unsure.starts).toBe(2);
    expect(unsure.final.confidence).toBeLessThan(SECOND_PASS_BELOW_CONFIDENCE);
  });
});
