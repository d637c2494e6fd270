import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readWav, writeWav } from '../audio/wav-io.ts';
import { type Sample, SampleMetadataSchema, VenusEvalSchema } from './scenario.ts';

/** Writes one sample in the Full-Duplex-Bench v1.5 layout: input.wav, clean_input.wav, metadata.json. */
export function writeSample(dir: string, sample: { meta: Sample['meta']; input: Int16Array; clean: Int16Array }): void {
  mkdirSync(dir, { recursive: true });
  writeWav(path.join(dir, 'input.wav'), sample.input);
  writeWav(path.join(dir, 'clean_input.wav'), sample.clean);
  writeFileSync(path.join(dir, 'metadata.json'), `${JSON.stringify(sample.meta, null, 2)}\n`);
}

/** Reads a sample folder that carries our `venus_eval` fields (one we generated). */
export function readSample(dir: string): Sample {
  const meta = SampleMetadataSchema.parse(JSON.parse(readFileSync(path.join(dir, 'metadata.json'), 'utf8')));
  const venus = VenusEvalSchema.parse(meta.venus_eval);
  return { dir, meta: { ...meta, venus_eval: venus }, input: readWav(path.join(dir, 'input.wav')) };
}

export function isSampleDir(dir: string): boolean {
  return existsSync(path.join(dir, 'input.wav')) && existsSync(path.join(dir, 'metadata.json'));
}
