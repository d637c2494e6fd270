import { z } from 'zod';
import type { ProtocolError } from './protocol-error.ts';

/**
 * What a response is made of. `audio`: spoken, with its transcript (OpenAI's `["audio"]`, beta
 * `["audio", "text"]`). `text`: `response.output_text.*` and `output_text` content only, no audio
 * events; the model port still synthesises the speech (the worker's timeline keeps it), the edge
 * simply does not send it.
 */
export type OutputModality = 'audio' | 'text';

const ModalitiesSchema = z
  .array(z.enum(['text', 'audio']))
  .min(1)
  .max(2);

export type ParsedModality = { ok: true; value: OutputModality } | { ok: false; error: ProtocolError };

/** `["text"]` is text; any list with `audio` is audio (with transcripts). */
export function parseModalities(value: unknown, param: string): ParsedModality {
  const parsed = ModalitiesSchema.safeParse(value);
  if (!parsed.success) {
    const message = `${param}: expected a list of "text" and "audio"`;
    return { ok: false, error: { code: 'invalid_event', message, param } };
  }
  return { ok: true, value: parsed.data.includes('audio') ? 'audio' : 'text' };
}

/** GA `output_modalities` for a modality. */
export function gaModalities(modality: OutputModality): OutputModality[] {
  return [modality];
}

/** Beta `modalities` for a modality. */
export function betaModalities(modality: OutputModality): OutputModality[] {
  return modality === 'audio' ? ['audio', 'text'] : ['text'];
}

/** Whether `sent` is shown back unchanged (`session.updated` echoes one canonical list). */
export function sameList(sent: unknown, shown: readonly string[]): boolean {
  return Array.isArray(sent) && sent.length === shown.length && sent.every((v, i) => v === shown[i]);
}
