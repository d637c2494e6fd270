import type { AudioFormat } from '@venus/protocol';

/**
 * The three audio encodings the public protocol speaks, under one canonical (beta) name each.
 * GA clients say `audio/pcm`, `audio/pcmu`, `audio/pcma`; beta clients `pcm16`, `g711_ulaw`, `g711_alaw`.
 */
export type CanonicalAudioFormat = 'pcm16' | 'g711_ulaw' | 'g711_alaw';

export const NATIVE_RATE_HZ: Readonly<Record<CanonicalAudioFormat, number>> = {
  pcm16: 24_000,
  g711_ulaw: 8_000,
  g711_alaw: 8_000,
};

/** How long `bytes` of audio in `format` play (pcm16 has two bytes a sample, G.711 one). */
export function audioDurationMs(bytes: number, format: CanonicalAudioFormat): number {
  const bytesPerSample = format === 'pcm16' ? 2 : 1;
  return (bytes / bytesPerSample / NATIVE_RATE_HZ[format]) * 1000;
}

const GA_NAME: Readonly<Record<CanonicalAudioFormat, string>> = {
  pcm16: 'audio/pcm',
  g711_ulaw: 'audio/pcmu',
  g711_alaw: 'audio/pcma',
};

export function canonicalAudioFormat(format: AudioFormat): CanonicalAudioFormat {
  switch (format) {
    case 'pcm16':
    case 'audio/pcm':
      return 'pcm16';
    case 'g711_ulaw':
    case 'audio/pcmu':
      return 'g711_ulaw';
    case 'g711_alaw':
    case 'audio/pcma':
      return 'g711_alaw';
  }
}

/** A format as a `session.update` may declare it: a bare name or `{ type, rate }`. */
export type DeclaredAudioFormat = AudioFormat | { type: AudioFormat; rate?: number | undefined };

export type FormatResolution = { ok: true; format: CanonicalAudioFormat } | { ok: false; message: string };

/** Accepts a declared format only at its native rate: the edge does not guess what a 16 kHz `pcm16` means. */
export function resolveDeclaredFormat(declared: DeclaredAudioFormat): FormatResolution {
  const name = typeof declared === 'string' ? declared : declared.type;
  const format = canonicalAudioFormat(name);
  const rate = typeof declared === 'string' ? undefined : declared.rate;
  if (rate !== undefined && rate !== NATIVE_RATE_HZ[format]) {
    return { ok: false, message: `${name} is only accepted at ${NATIVE_RATE_HZ[format]} Hz, not ${rate} Hz` };
  }
  return { ok: true, format };
}

/** The GA shape of a format, as `session.created`/`session.updated` report it. */
export function gaFormat(format: CanonicalAudioFormat): { type: string; rate: number } {
  return { type: GA_NAME[format], rate: NATIVE_RATE_HZ[format] };
}
