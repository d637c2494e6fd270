import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeWav } from '../audio/wav-io.ts';
import { loadSamples } from './fdb-loader.ts';
import { ScenarioBuilder } from './scenario-builder.ts';
import type { VoiceBank } from './voice-bank.ts';

/** A fake voice bank: one second of a 200 Hz tone per text, no synthesiser needed. */
const fakeBank = {
  speech: async () => Float32Array.from({ length: 16_000 }, (_, i) => 0.3 * Math.sin((2 * Math.PI * 200 * i) / 16_000)),
  close: () => undefined,
} as unknown as VoiceBank;

describe('ScenarioBuilder', () => {
  it('places speech, times the ASR transcripts and keeps the overlap out of the clean input', async () => {
    const b = new ScenarioBuilder(fakeBank, 0.5);
    const ctx = await b.say({
      role: 'user',
      text: 'Hello there!',
      voice: 'en-us',
      at: 0.5,
      levelDb: -26,
      transcribe: true,
    });
    const bg = await b.say({
      role: 'background',
      text: 'News.',
      voice: 'en-gb',
      at: 3,
      levelDb: -50,
      overlap: true,
      transcribe: false,
    });
    const built = b.build(6);
    expect([ctx.start, ctx.end, bg.start, bg.end]).toEqual([0.5, 1.5, 3, 4]);
    expect(built.transcripts).toEqual([{ at: 2, text: 'Hello there!' }]);
    expect(built.input.length).toBe(6 * 16_000);
    const energy = (pcm: Int16Array, from: number, to: number) => {
      let sum = 0;
      for (let i = from * 16_000; i < to * 16_000; i++) sum += (pcm[i]! / 32768) ** 2;
      return sum;
    };
    expect(energy(built.input, 3, 4)).toBeGreaterThan(0);
    expect(energy(built.clean, 3, 4)).toBe(0);
    expect(energy(built.clean, 0.5, 1.5)).toBeCloseTo(energy(built.input, 0.5, 1.5), 6);
  });
});

describe('loadSamples (Full-Duplex-Bench v1.5 layout)', () => {
  it('derives the set, the expectation and client-ASR transcripts from metadata.json', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'fdb-'));
    try {
      const dir = path.join(root, 'user_backchannel', '7');
      const input = new Int16Array(16_000 * 8);
      for (let i = 16_000; i < 32_000; i++) input[i] = Math.round(8000 * Math.sin(i / 5));
      for (let i = 64_000; i < 72_000; i++) input[i] = Math.round(8000 * Math.sin(i / 5));
      mkdirSync(dir, { recursive: true });
      writeWav(path.join(dir, 'input.wav'), input);
      writeFileSync(
        path.join(dir, 'metadata.json'),
        JSON.stringify({ context_text: 'Tell me about your day.', current_turn_text: 'mm-hmm', timestamps: [4, 4.5] }),
      );
      const [sample] = loadSamples(root);
      expect(sample?.meta.venus_eval).toMatchObject({
        set: 'user_backchannel',
        expected: 'resume',
        source: 'full-duplex-bench',
      });
      const [context, overlap] = sample?.meta.venus_eval.transcripts ?? [];
      expect(context?.text).toBe('Tell me about your day.');
      // The context's sound ends at 2 s (to the 32 ms frame); its text follows 0.5 s later.
      expect(context?.at).toBeCloseTo(2.5, 1);
      expect(overlap).toEqual({ at: 5, text: 'mm-hmm' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
