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
