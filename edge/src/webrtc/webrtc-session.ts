import { base64ToPcm, createLogger, logUnlessTeardown } from '@venus/protocol';
import { type RTCPeerConnection, type RTCRtpTransceiver, RtpHeader, RtpPacket } from 'werift';
import { AudioDelta } from '../audio/audio-delta.ts';
import type { Clock } from '../realtime/clock.ts';
import { serverEventJson, type TypedRealtimeTransport } from '../realtime/event-json.ts';
import { randomId } from '../realtime/ids.ts';
import type { OutboundEvent } from '../realtime/outbound-event.ts';
import type { RealtimeConnection } from '../realtime/realtime-connection.ts';
import { EventsChannel } from './events-channel.ts';
import { InboundOpusAudio } from './inbound-opus-audio.ts';
import { OpusCodec } from './opus-codec.ts';
import { PacedOpusSender } from './paced-opus-sender.ts';
import { answerOffer, createPeerConnection, type PeerOptions } from './peer-connection.ts';
import { RtpPlayout } from './rtp-playout.ts';

const log = createLogger('edge.webrtc');

import { stripAudioFormats } from './session-update-filter.ts';

/** The data channel OpenAI's WebRTC clients open for JSON events. */
export const EVENTS_CHANNEL_LABEL = 'oai-events';

export interface WebRtcSessionOptions extends PeerOptions {
  /** The call ends if media has not connected this long after the answer (default 30 s). */
  connectTimeoutMs?: number;
  /** A `disconnected` peer gets this long to come back before the call ends (default 5 s). */
  disconnectGraceMs?: number;
  clock?: Clock;
  /** The call ended, for whatever reason. */
  onClosed?(session: WebRtcSession): void;
}

export interface WebRtcSessionStats {
  /** Answer sent to peer connection `connected`, in ms. */
  connectMs: number | undefined;
  rtpPacketsIn: number;
  rtpPacketsOut: number;
  /** Inbound packets dropped (late, duplicate, undecodable). */
  rtpDroppedIn: number;
  framesFlushed: number;
  eventsDropped: number;
}

/** Server events whose audio the RTP track carries instead: they never go on the data channel. */
const AUDIO_DELTAS = new Set(['response.output_audio.delta', 'response.audio.delta']);
/** The events after which an OpenAI client drops the audio it has not played: the edge does the same for RTP. */
const BARGE_IN = new Set(['output_audio_buffer.cleared', 'input_audio_buffer.speech_started']);

/**
 * One realtime call over WebRTC, an alternative transport for the same RealtimeConnection a
 * WebSocket feeds. The `oai-events` data channel carries the JSON client and server events; the
 * audio track carries the microphone (RTP Opus, decoded and handed to the connection as 24 kHz
 * samples: `handleAudioPcm`, admitted as an append is, no JSON or base64 on the way) and the
 * assistant's voice (the samples of its audio deltas, paced out as RTP Opus in real time). Server
 * events arrive as objects (the transport's typed `events` side), not as text to parse back:
 * audio deltas never become JSON, everything else goes on the data channel as the WebSocket
 * would carry it.
 * A barge-in flushes the audio not yet sent. Because the edge sends the audio at the pace it plays,
 * it knows what the client has heard: RTP send times give the positions (RtpPlayout) that go to the
 * session as playback acknowledgements, as a Venus-aware client's own `venus.playback.ack` would.
 *
 * @example
 *   const call = new WebRtcSession({ iceAddress: '127.0.0.1' });
 *   const answerSdp = await call.answer(offerSdp);
 *   call.attach(edge.openRealtime(call.transport, tenant, admission));
 */
export class WebRtcSession {
  readonly transport: TypedRealtimeTransport;
  readonly #options: WebRtcSessionOptions;
  readonly #pc: RTCPeerConnection;
  readonly #events = new EventsChannel();
  readonly #codec = new OpusCodec();
  readonly #inbound: InboundOpusAudio;
  readonly #sender: PacedOpusSender;
  readonly #playout: RtpPlayout;
  #transceiver: RTCRtpTransceiver | undefined;
  #connection: RealtimeConnection | undefined;
  #answeredAt: number | undefined;
  #connectMs: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #closeReason: string | undefined;

  constructor(options: WebRtcSessionOptions = {}) {
    this.#options = options;
    this.#pc = createPeerConnection(options);
    this.transport = {
      kind: 'webrtc',
      send: (text) => {
        if (!this.#closed) this.#events.send(text);
      },
      events: { event: (event, eventId) => this.#onServerEvent(event, eventId) },
      close: (_code, reason) => this.close(reason || 'session ended'),
      bufferedAmount: () => this.#events.bufferedAmount(),
    };
    this.#inbound = new InboundOpusAudio({ codec: this.#codec, onAudio: (pcm) => this.#onMicrophone(pcm) });
    this.#playout = new RtpPlayout({
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      onAck: (itemId, playedMs) => this.#inject({ type: 'venus.playback.ack', item_id: itemId, played_ms: playedMs }),
    });
    this.#sender = new PacedOpusSender({
      codec: this.#codec,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      send: (packet) => {
        const header = new RtpHeader({
          sequenceNumber: packet.sequenceNumber,
          timestamp: packet.timestamp,
          marker: packet.marker,
        });
        // A lost packet is like network loss (the transport's state change reports a dead peer); debug only, it could be 50 a second.
        this.#transceiver?.sender
          .sendRtp(new RtpPacket(header, Buffer.from(packet.payload)))
          .catch((error: unknown) => log.debug({ err: error }, 'RTP packet not sent'));
      },
      onFrameSent: (itemId, ms) => this.#playout.frameSent(itemId, ms),
    });
    this.#wirePeer();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Why the call ended, once it has. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  get stats(): WebRtcSessionStats {
    return {
      connectMs: this.#connectMs,
      rtpPacketsIn: this.#inbound.stats.packets,
      rtpPacketsOut: this.#sender.stats.packetsSent,
      rtpDroppedIn: this.#inbound.stats.dropped,
      framesFlushed: this.#sender.stats.framesFlushed,
      eventsDropped: this.#events.dropped,
    };
  }

  /** Applies the client's offer and returns the answer, ICE candidates included. */
  async answer(offerSdp: string): Promise<string> {
    const answer = await answerOffer(this.#pc, offerSdp, this.#options);
    this.#transceiver = this.#pc.getTransceivers().find((t) => t.kind === 'audio');
    this.#answeredAt = performance.now();
    this.#armTimer(this.#options.connectTimeoutMs ?? 30_000, 'media did not connect');
    return answer;
  }

  /** Binds the realtime session: from now on the call's events and audio flow through it. */
  attach(connection: RealtimeConnection): void {
    this.#connection = connection;
    if (connection.closed) this.close(this.#closeReason ?? 'session refused');
  }

  /** Ends the call: the peer connection closes, and the realtime session with it. */
  close(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeReason = reason;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#inbound.flush();
    this.#sender.close();
    this.#playout.stop();
    this.#connection?.handleClose(1000, reason);
    this.#pc.close().catch((error: unknown) => logUnlessTeardown(log, error, 'closing the peer connection failed'));
    this.#codec.close();
    this.#options.onClosed?.(this);
  }

  #wirePeer(): void {
    const pc = this.#pc;
    pc.onTrack.subscribe((track) => {
      if (track.kind !== 'audio') return;
      track.onReceiveRtp.subscribe((rtp) => {
        if (this.#closed || this.#connection === undefined) return;
        this.#inbound.push({
          sequenceNumber: rtp.header.sequenceNumber,
          timestamp: rtp.header.timestamp,
          payload: rtp.payload,
        });
      });
    });
    pc.onDataChannel.subscribe((channel) => {
      if (channel.label !== EVENTS_CHANNEL_LABEL) return;
      this.#events.attach(channel);
      channel.stateChanged.subscribe((state) => {
        if (state === 'open') this.#events.attach(channel);
        // Closing the channel is how OpenAI's clients hang up (with the peer connection).
        if (state === 'closed') this.close('the client closed the events channel');
      });
      channel.onMessage.subscribe((data) => this.#onClientMessage(data));
    });
    pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') {
        if (this.#timer !== undefined) clearTimeout(this.#timer);
        this.#timer = undefined;
        if (this.#connectMs === undefined && this.#answeredAt !== undefined) {
          this.#connectMs = performance.now() - this.#answeredAt;
        }
      } else if (state === 'disconnected') {
        this.#armTimer(this.#options.disconnectGraceMs ?? 5000, 'media disconnected');
      } else if (state === 'failed' || state === 'closed') {
        this.close(`peer connection ${state}`);
      }
    });
  }

  #armTimer(ms: number, reason: string): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.close(reason), ms);
    this.#timer.unref?.();
  }

  #onClientMessage(data: string | Buffer): void {
    const connection = this.#connection;
    if (connection === undefined || this.#closed) return;
    if (typeof data !== 'string') {
      connection.handleMessage(data);
      return;
    }
    const filtered = stripAudioFormats(data);
    if (filtered.notice !== undefined) this.#notice('audio_format_ignored', filtered.notice);
    connection.handleMessage(filtered.text);
  }

  #onMicrophone(pcm24k: Int16Array): void {
    this.#connection?.handleAudioPcm(pcm24k);
  }

  #onServerEvent(event: OutboundEvent, eventId: string): void {
    if (this.#closed) return;
    if (AUDIO_DELTAS.has(event.type)) {
      // GA and beta names carry the same samples: the GA one is played.
      const { item_id: itemId, delta } = event;
      if (event.type === 'response.output_audio.delta' && typeof itemId === 'string') {
        if (delta instanceof AudioDelta) this.#sender.enqueue(itemId, delta.pcm24k);
        else if (typeof delta === 'string') this.#sender.enqueue(itemId, base64ToPcm(delta));
      }
      return;
    }
    if (event.type === 'response.output_audio.done' && typeof event.item_id === 'string') {
      this.#sender.finish(event.item_id);
    } else if (BARGE_IN.has(event.type)) {
      this.#sender.flush();
    } else if (event.type === 'session.created' || event.type === 'session.updated') {
      this.#keepPcm16(event.session as Record<string, unknown> | undefined);
    }
    this.#events.send(serverEventJson(event, eventId));
  }

  /**
   * The media track fixes the audio as Opus; the core must keep exchanging pcm16 with this
   * transport. A client token may have opened the session with another format: undo it.
   */
  #keepPcm16(session: Record<string, unknown> | undefined): void {
    if (session === undefined) return;
    if (session.input_audio_format === 'pcm16' && session.output_audio_format === 'pcm16') return;
    this.#inject({ type: 'session.update', session: { input_audio_format: 'pcm16', output_audio_format: 'pcm16' } });
  }

  #notice(code: string, message: string): void {
    this.#events.send(JSON.stringify({ type: 'venus.notice', event_id: randomId('event'), code, message }));
  }

  /**
   * A client event of the transport's own making. Deferred: this runs inside the connection's
   * emit, and must not re-enter it while it relays an event.
   */
  #inject(event: Record<string, unknown>): void {
    queueMicrotask(() => {
      if (!this.#closed) this.#connection?.handleMessage(JSON.stringify(event));
    });
  }
}
