import { readFileSync, writeFileSync } from 'node:fs';
import { parseWav, resamplePcm16 } from '@venus/gpu-worker';

export const EVAL_RATE_HZ = 16_000;

/** A mono PCM16 RIFF/WAVE file's bytes. */
export function encodeWav(samples: Int16Array, rateHz = EVAL_RATE_HZ): Uint8Array {
  const out = new Uint8Array(44 + samples.byteLength);
  const view = new DataView(out.buffer);
  const ascii = (at: number, s: string) => {
    for (let i = 0; i < s.length; i++) view.setUint8(at + i, s.charCodeAt(i));
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + samples.byteLength, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, rateHz, true);
  view.setUint32(28, rateHz * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, samples.byteLength, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + i * 2, samples[i] ?? 0, true);
  return out;
}

export function writeWav(file: string, samples: Int16Array, rateHz = EVAL_RATE_HZ): void {
  writeFileSync(file, encodeWav(samples, rateHz));
}

/** Reads a PCM16 WAV (first channel) and resamples it to `rateHz` (16 kHz by default). */
export function readWav(file: string, rateHz = EVAL_RATE_HZ): Int16Array {
  const wav = parseWav(readFileSync(file));
  return wav.sampleRateHz === rateHz ? wav.samples : resamplePcm16(wav.samples, wav.sampleRateHz, rateHz);
}
