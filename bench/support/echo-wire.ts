/**
 * What the relay-overhead load looks like on the wire, shared by the load client, the measuring
 * worker and the bare baseline server: 20 ms frames of 24 kHz pcm16 (960 bytes, 1,280 base64
 * characters) going up, and per frame one echo coming back. From the edge the echo is the frame's
 * audio delta (`response.output_audio.delta`, 20 ms of audio), counted in order: frames stay in
 * order end to end, and a GA client that did not ask for `session.venus.timeline_audio` gets no
 * per-chunk `venus.timeline` record. From the bare server it is one small `venus.timeline`-shaped
 * message carrying the frame's number in `audioChunkSeq`.
 */
export const FRAME_MS = 20;
export const FRAME_SAMPLES_24K = 480;

/** 20 ms of a quiet 440 Hz tone as little-endian pcm16 at `rateHz`, base64. */
export function toneBase64(samples: number, rateHz: number): string {
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) pcm[i] = Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / rateHz));
  return Buffer.from(pcm.buffer).toString('base64');
}

/**
 * What the load client sends first: a GA `session.update` (`session.type: "realtime"`), as current
 * OpenAI clients do, so the server sends GA events only (no beta aliases of each audio delta).
 */
export const SESSION_UPDATE_MESSAGE = Buffer.from(
  JSON.stringify({ type: 'session.update', session: { type: 'realtime' } }),
);

/** The client's `input_audio_buffer.append` for one frame; the same bytes every time. */
export const APPEND_MESSAGE = Buffer.from(
  JSON.stringify({ type: 'input_audio_buffer.append', audio: toneBase64(FRAME_SAMPLES_24K, 24_000) }),
);
const APPEND_PREFIX = APPEND_MESSAGE.subarray(0, 40);

/** Whether a client message is an append (the bare server answers those and ignores the rest). */
export function isAppend(message: Buffer): boolean {
  return message.length >= APPEND_PREFIX.length && message.subarray(0, APPEND_PREFIX.length).equals(APPEND_PREFIX);
}

/** The echo's audio: one frame of 24 kHz output, as the `assistant_audio` relay frame carries it. */
export const ECHO_PCM24K = new Uint8Array(Buffer.from(toneBase64(FRAME_SAMPLES_24K, 24_000), 'base64'));

/** How the server marks its events' kinds; `event_id` may come before `type`, nothing else does. */
const ECHO_TYPE = Buffer.from('"type":"venus.timeline"');
const ERROR_TYPE = Buffer.from('"type":"error"');
const DELTA_TYPE = Buffer.from('"type":"response.output_audio.delta"');
/** `type` sits within this many bytes of the start (after an `event_id` of up to ~40 characters). */
const TYPE_WITHIN = 72;
const SEQ_KEY = Buffer.from('"audioChunkSeq":');

function hasTypeNearStart(message: Buffer, type: Buffer): boolean {
  const at = message.subarray(0, TYPE_WITHIN + type.length).indexOf(type);
  return at >= 0;
}

/** An echo that carries no number: the n-th one of a socket answers its n-th frame. */
export const ECHO_IN_ORDER = -2;

/** The frame number an echo carries, ECHO_IN_ORDER for an audio delta, or -1 when the message is not an echo. */
export function echoedFrame(message: Buffer): number {
  if (hasTypeNearStart(message, DELTA_TYPE)) return ECHO_IN_ORDER;
  if (!hasTypeNearStart(message, ECHO_TYPE)) return -1;
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
  return hasTypeNearStart(message, ERROR_TYPE);
}
