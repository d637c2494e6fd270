import { readFileSync, writeFileSync } from 'node:fs';
import { encodeWav, parseWav, resamplePcm16 } from '@venus/gpu-worker';

export const EVAL_RATE_HZ = 16_000;

export function writeWav(file: string, samples: Int16Array, rateHz = EVAL_RATE_HZ): void {
  writeFileSync(file, encodeWav(samples, rateHz));
}

/** Reads a PCM16 WAV (first channel) and resamples it to `rateHz` (16 kHz by default). */
export function readWav(file: string, rateHz = EVAL_RATE_HZ): Int16Array {
  const wav = parseWav(readFileSync(file));
  return wav.sampleRateHz === rateHz ? wav.samples : resamplePcm16(wav.samples, wav.sampleRateHz, rateHz);
}
