/**
 * What the relay-overhead load looks like on the wire, shared by the load client, the measuring
 * worker and the bare baseline server: 20 ms frames of 24 kHz pcm16 (960 bytes, 1,280 base64
 * characters) going up, and per frame one `venus.timeline` event carrying the frame's number in
 * `audioChunkSeq` plus two audio deltas coming back.
 */
export const FRAME_MS = 20;
export const FRAME_SAMPLES_24K = 480;

/** 20 ms of a quiet 440 Hz tone as little-endian pcm16 at `rateHz`, base64. */
export function toneBase64(samples: number, rateHz: number): string {
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / rateHz));
  return Buffer.from(pcm.buffer).toString('base64');
}

/** The client's `input_audio_buffer.append` for one frame; the same bytes every time. */
export const APPEND_MESSAGE = Buffer.from(
  JSON.stringify({ type: 'input_audio_buffer.append', audio: toneBase64(FRAME_SAMPLES_24K, 24_000) }),
);

/** The echo's audio: one frame of 24 kHz output, as an `assistant.audio` event carries it. */
export const ECHO_PCM24K_BASE64 = toneBase64(FRAME_SAMPLES_24K, 24_000);

/** Every echo starts with this: the edge puts `type` first in each event it sends. */
export const ECHO_PREFIX = Buffer.from('{"type":"venus.timeline"');
export const ERROR_PREFIX = Buffer.from('{"type":"error"');
const SEQ_KEY = Buffer.from('"audioChunkSeq":');

/** The frame number an echo carries, or -1 when the message is not an echo. */
export function echoedFrame(message: Buffer): number {
  if (message.length < ECHO_PREFIX.length || message.compare(ECHO_PREFIX, 0, ECHO_PREFIX.length, 0, ECHO_PREFIX.length))
    return -1;
  const at = message.indexOf(SEQ_KEY);
  if (at < 0) return -1;
  let n = 0;
  for (let i = at + SEQ_KEY.length; i < message.length; i++) {
    const digit = message[i]! - 48;
    if (digit < 0 || digit > 9) break;
    n = n * 10 + digit;
  }
  return n;
}

/** Whether the message is an `error` event. */
export function isErrorEvent(message: Buffer): boolean {
  return (
    message.length >= ERROR_PREFIX.length &&
    !message.compare(ERROR_PREFIX, 0, ERROR_PREFIX.length, 0, ERROR_PREFIX.length)
  );
}
