import { VenusError } from '@venus/protocol';

export interface WavPcm {
  sampleRateHz: number;
  /** Mono 16-bit samples (the first channel when the file has more). */
  samples: Int16Array;
}

/**
 * Reads a PCM16 RIFF/WAVE file. A streaming writer (espeak-ng among them) may leave the data size
 * unset or too large, so the data chunk is clamped to the bytes actually present.
 *
 * @example
 *   const { sampleRateHz, samples } = parseWav(fs.readFileSync('o.wav'));
 */
export function parseWav(bytes: Uint8Array): WavPcm {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.byteLength < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') {
    throw new VenusError('audio_wrong_format', 'not a RIFF/WAVE file');
  }
  let offset = 12;
  let channels = 0;
  let sampleRateHz = 0;
  let bits = 0;
  while (offset + 8 <= bytes.byteLength) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      const format = view.getUint16(body, true);
      channels = view.getUint16(body + 2, true);
      sampleRateHz = view.getUint32(body + 4, true);
      bits = view.getUint16(body + 14, true);
      if (format !== 1 || bits !== 16) {
        throw new VenusError('audio_wrong_format', `WAV format ${format}/${bits}-bit; expected PCM 16-bit`);
      }
    } else if (id === 'data') {
      if (channels === 0) throw new VenusError('audio_wrong_format', 'WAV data chunk before fmt chunk');
      const available = bytes.byteLength - body;
      const length = Math.min(size, available);
      const frames = Math.floor(length / (2 * channels));
      const samples = new Int16Array(frames);
      for (let i = 0; i < frames; i++) samples[i] = view.getInt16(body + i * 2 * channels, true);
      return { sampleRateHz, samples };
    }
    offset = body + size + (size % 2);
  }
  throw new VenusError('audio_wrong_format', 'WAV file has no data chunk');
}

/**
 * A PCM16 RIFF/WAVE file's bytes: mono, or `channels` interleaved (left, right, left, …). What
 * transcription endpoints accept as an upload, and what the demo and the evaluation write.
 *
 * @example
 *   const wav = encodeWav(turnAudio16k, 16_000);
 *   const stereo = encodeWav(interleaved, 24_000, 2);
 */
export function encodeWav(samples: Int16Array, sampleRateHz: number, channels = 1): Uint8Array<ArrayBuffer> {
  const dataBytes = samples.length * 2;
  const bytes = new Uint8Array(44 + dataBytes);
  const view = new DataView(bytes.buffer);
  const ascii = (at: number, text: string) => {
    for (let i = 0; i < text.length; i++) bytes[at + i] = text.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRateHz, true);
  view.setUint32(28, sampleRateHz * 2 * channels, true);
  view.setUint16(32, 2 * channels, true);
  view.setUint16(34, 16, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(44 + i * 2, samples[i]!, true);
  return bytes;
}
