import { bytesToPcm, SessionConfigSchema } from '@venus/protocol';
import { AudioDelta } from '../edge/src/audio/audio-delta.ts';
import { serverEventJson, type TypedRealtimeTransport } from '../edge/src/realtime/event-json.ts';
import { RealtimeConnection } from '../edge/src/realtime/realtime-connection.ts';
import type { RealtimeTransport } from '../edge/src/realtime/realtime-transport.ts';
import { APPEND_MESSAGE, FRAME_SAMPLES_24K, SESSION_UPDATE_MESSAGE, toneBase64 } from './support/echo-wire.ts';
import { inProcessEchoLink } from './support/in-process-echo-link.ts';

export interface EdgeFrameCost {
  /** JavaScript time per echoed frame on the edge: parse, base64, resample, relay encode, relay decode, events out. */
  edgeUs: number;
  /** Messages and bytes sent to the client per frame (typed: data channel messages; audio went as samples). */
  messagesPerFrame: number;
  bytesPerFrame: number;
}

/**
 * The edge's own JavaScript per 20 ms frame with no sockets at all: one RealtimeConnection (a GA
 * client) on a link that round-trips every frame through the msgpack relay codec to an
 * EchoFrameHost in the same thread. Set beside the relay benchmark's CPU per echo, it says how much
 * of that is JavaScript and how much is socket I/O. The worker's half of the codec (decode of the
 * edge's frame, encode of the echo) is timed apart and left out.
 *
 * `typed: true` runs the WebRTC path instead: microphone samples in through `handleAudioPcm`, and
 * events out through a typed sink as WebRtcSession takes them (audio deltas as samples, the rest
 * as data channel JSON); Opus and RTP are not part of it.
 *
 * @example
 *   const cost = runEdgeFrameCost(30_000);
 *   const webrtc = runEdgeFrameCost(30_000, { typed: true });
 */
export function runEdgeFrameCost(frames: number, options: { typed?: boolean } = {}): EdgeFrameCost {
  const half = { us: 0 };
  const link = inProcessEchoLink(half);
  let messages = 0;
  let bytes = 0;
  let samples = 0;
  const send = (text: string) => {
    messages += 1;
    bytes += text.length;
  };
  const transport: RealtimeTransport | TypedRealtimeTransport = options.typed
    ? {
        send,
        close: () => {},
        events: {
          event: (event, eventId) => {
            if (event.delta instanceof AudioDelta) samples += event.delta.pcm24k.length;
            else send(serverEventJson(event, eventId));
          },
        },
      }
    : { send, close: () => {} };
  const connection = new RealtimeConnection({
    link,
    transport,
    tenant: 'default',
    sessionId: 'sess_frame_cost',
    config: SessionConfigSchema.parse({ chunkMs: 160 }),
  });
  connection.start();
  connection.handleMessage(SESSION_UPDATE_MESSAGE.toString());
  const append = APPEND_MESSAGE.toString();
  const pcm24k = bytesToPcm(Buffer.from(toneBase64(FRAME_SAMPLES_24K, 24_000), 'base64'));
  const frame = options.typed ? () => connection.handleAudioPcm(pcm24k) : () => connection.handleMessage(append);
  for (let i = 0; i < Math.min(5_000, frames); i++) frame();
  messages = 0;
  bytes = 0;
  half.us = 0;
  samples = 0;
  const started = performance.now();
  for (let i = 0; i < frames; i++) frame();
  const totalUs = (performance.now() - started) * 1000;
  connection.handleClose(1000);
  if (options.typed && samples !== frames * FRAME_SAMPLES_24K) throw new Error('the typed sink missed echoed audio');
  return {
    edgeUs: (totalUs - half.us) / frames,
    messagesPerFrame: messages / frames,
    bytesPerFrame: bytes / frames,
  };
}
