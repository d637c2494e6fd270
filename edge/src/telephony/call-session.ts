import {
  AUDIO,
  bytesToPcm,
  createLogger,
  type EdgeToWorkerFrame,
  type ErrorCode,
  type SessionConfig,
  type TimelineEvent,
  toVenusError,
  VenusError,
  type WorkerLink,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { InputAudioConverter } from '../audio/input-audio-converter.ts';
import { StreamingResampler } from '../audio/streaming-resampler.ts';
import type { Clock } from '../realtime/clock.ts';
import { randomId } from '../realtime/ids.ts';
import { REMEMBERED_USER_ITEMS, RecentIds } from '../realtime/item-checks.ts';
import type { ProtocolError } from '../realtime/protocol-error.ts';
import type { SessionHooks } from '../tenancy/session-hooks.ts';
import { CallMarks } from './call-marks.ts';
import { parseDtmfDigit } from './dtmf.ts';
import { audioFormatOf, compand, G711_RATE_HZ, type G711Law } from './g711-law.ts';
import { PacedG711Sender, type PacedG711SenderStats } from './paced-g711-sender.ts';

const log = createLogger('edge.telephony');

/**
 * What a telephony transport does for a call: carry the assistant's voice to the caller, drop what
 * the far end still buffers, and hang up. The call core calls these; the transport calls the core.
 */
export interface CallMedia {
  /** One 20 ms G.711 frame (160 bytes) to send now. `first`: the first frame of a talkspurt (the RTP marker bit). */
  sendAudio(frame: Uint8Array, first: boolean): void;
  /** The runtime gave the caller the floor: drop any assistant audio the far end still holds (Twilio `clear`). */
  clear(): void;
  /**
   * Transports whose far end reports playback (Twilio marks) send this after the audio before it
   * and call `CallSession.markPlayed(name)` when it comes back. Without it, audio counts as heard
   * once it is sent (RTP: the caller's phone plays what it receives).
   */
  sendMark?(name: string): void;
  /** The session ended on the runtime's side (`reason` says why): end the call. */
  hangUp(reason: string): void;
}

export interface CallSessionOptions {
  /** The relay/worker-link contract: an in-process link on the edge, a WebSocketWorkerLink from another process. */
  link: WorkerLink;
  media: CallMedia;
  tenant: string;
  /** The assistant the call talks to (instructions, voice, delivery policy), chosen by the transport. */
  config: SessionConfig;
  /** The leg's codec, both ways. */
  law: G711Law;
  sessionId?: string;
  /** The tenant's accounting (input audio budget, usage, the session slot); none: unmetered. */
  hooks?: SessionHooks;
  clock?: Clock;
  /** How far ahead of real time assistant frames go out (default 40 ms; a far end with its own buffer may take more). */
  leadMs?: number;
  /** Every timeline event of the session, as the worker sent it. */
  onTimeline?(event: TimelineEvent): void;
}

export interface CallSessionStats extends PacedG711SenderStats {
  /** Caller audio dropped by the input budget, in ms. */
  audioRefusedMs: number;
  marksSent: number;
  marksPlayed: number;
  /** `clear`s asked of the transport: each a decision of the runtime that the caller takes the floor. */
  clears: number;
}

/**
 * One phone call as an ordinary session: the same timeline, delegation, interruption handling and
 * playback accounting as a WebSocket client, over nothing but a WorkerLink and the edge's audio
 * modules (no HTTP framework, no socket), so a Twilio stream on the edge and a SIP bridge in its
 * own process share it.
 *
 * In: the caller's G.711 at 8 kHz, any frame size (decoded and resampled to the model's 16 kHz by
 * the edge's InputAudioConverter), DTMF digits (`user.dtmf` on the timeline). Out: the assistant's
 * 24 kHz audio resampled to 8 kHz (the edge's StreamingResampler), companded, and paced as 20 ms
 * frames through `media.sendAudio`. When the runtime decides the caller takes the floor (an
 * `assistant.interruption` that discards, repairs or parks the turn) nothing queued is sent and
 * `media.clear()` is called; a backchannel, other-directed or background speech (`continue`) never
 * stops the audio. Playback is reported as the worker's `playback_ack`s: at each mark's echo where
 * the transport has marks, at each mark's send otherwise. A result's DELIVERED follows the
 * acknowledgement of the last chunk that spoke it.
 *
 * @example
 *   const call = new CallSession({ link, tenant, config, law: 'pcmu', media: {
 *     sendAudio: (frame) => ws.send(mediaMessage(frame)), clear: () => ws.send(clearMessage),
 *     sendMark: (name) => ws.send(markMessage(name)), hangUp: () => ws.close() } });
 *   call.start();
 *   call.receiveAudio(mulawFrame); call.markPlayed('m1'); call.hangUp('caller hung up');
 */
export class CallSession {
  readonly sessionId: string;
  readonly #options: CallSessionOptions;
  readonly #converter: InputAudioConverter;
  /** 24 kHz -> 8 kHz, reset at each utterance so one utterance's filter tail never leaks into the next. */
  readonly #downsampler = new StreamingResampler(AUDIO.outputSampleRateHz, G711_RATE_HZ);
  readonly #sender: PacedG711Sender;
  readonly #marks = new CallMarks();
  /** Samples of assistant chunks awaiting their `assistant.audio` event (the worker sends each right before it). */
  readonly #pendingAudio = new Map<string, Uint8Array>();
  /** Utterances the caller cut off: audio of theirs still in flight is not played. */
  readonly #cut = new RecentIds(REMEMBERED_USER_ITEMS);
  #speaking: string | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;
  #audioRefusedMs = 0;
  #clears = 0;
  #settleOpen: { resolve(): void; reject(error: VenusError): void } | undefined;
  /** The worker's last error for this session, kept to say why a session that never opened was refused. */
  #lastError: { code: ErrorCode; message: string } | undefined;
  /** Worker errors of this call by code. */
  readonly #workerErrors = new Map<ErrorCode, number>();
  /**
   * Resolves once the worker has opened the session (its first timeline event); rejects if the
   * session closes first (a worker at capacity, draining or failing), with the worker's reason.
   * A transport that can still refuse the call (SIP before its 200) waits for it, so that a refused
   * session is a refused call rather than an answered call that hangs up at once.
   */
  readonly opened: Promise<void>;

  constructor(options: CallSessionOptions) {
    this.#options = options;
    this.sessionId = options.sessionId ?? randomId('sess');
    this.opened = new Promise<void>((resolve, reject) => {
      this.#settleOpen = { resolve, reject };
    });
    // Transports that answer at once (Twilio) never wait on it: its rejection is not an unhandled one.
    this.opened.catch(() => {});
    this.#converter = new InputAudioConverter(audioFormatOf(options.law));
    this.#sender = new PacedG711Sender({
      law: options.law,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.leadMs === undefined ? {} : { leadMs: options.leadMs }),
      sendFrame: (frame, _utteranceId, first) => this.#options.media.sendAudio(frame, first),
      markReached: (mark) => {
        const { media } = this.#options;
        if (media.sendMark === undefined) this.#ack(mark.utteranceId, mark.playedMs);
        else media.sendMark(this.#marks.add(mark));
      },
    });
  }

  get closed(): boolean {
    return this.#closed;
  }

  get stats(): CallSessionStats {
    return {
      ...this.#sender.stats,
      audioRefusedMs: this.#audioRefusedMs,
      marksSent: this.#marks.sent,
      marksPlayed: this.#marks.played,
      clears: this.#clears,
    };
  }

  /** Milliseconds of assistant audio queued and not yet sent. */
  get queuedMs(): number {
    return this.#sender.queuedMs;
  }

  /** Opens the worker session with the call's tenant and assistant. */
  start(): void {
    this.#unsubscribe = this.#link.onFrame(this.sessionId, (frame) => this.#onWorkerFrame(frame));
    this.#send({ kind: 'open', session: this.sessionId, tenant: this.#options.tenant, config: this.#options.config });
  }

  /** Caller audio, G.711 at 8 kHz in the call's law. Refused (returned) when over the input budget. */
  receiveAudio(bytes: Uint8Array): ProtocolError | undefined {
    if (this.#closed || bytes.length === 0) return undefined;
    const ms = (bytes.length * 1000) / G711_RATE_HZ;
    const admitted = this.#options.hooks?.admitAudioIn(ms);
    if (admitted !== undefined && !admitted.ok) {
      this.#audioRefusedMs += ms;
      return admitted.error;
    }
    const pcm = this.#converter.convert(bytes);
    if (pcm.length > 0) {
      this.#send({
        kind: 'audio',
        session: this.sessionId,
        pcm16k: new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength),
      });
    }
    return undefined;
  }

  /** A DTMF key the caller pressed (0-9, *, #, A-D): a `user.dtmf` event on the timeline. */
  receiveDtmf(digit: string): ProtocolError | undefined {
    if (this.#closed) return undefined;
    const parsed = parseDtmfDigit(digit);
    if (!parsed.ok) return parsed.error;
    this.#send({ kind: 'dtmf', session: this.sessionId, digit: parsed.digit });
    return undefined;
  }

  /** The far end reports it has played the audio before mark `name`. Unknown or cleared marks are ignored. */
  markPlayed(name: string): void {
    if (this.#closed) return;
    const mark = this.#marks.take(name);
    if (mark !== undefined) this.#ack(mark.utteranceId, mark.playedMs);
  }

  /** The call ended on the transport's side: the worker session closes. */
  hangUp(reason: string): void {
    if (this.#closed) return;
    this.#teardown();
    this.#send({ kind: 'close', session: this.sessionId, reason }, true);
  }

  get #link(): WorkerLink {
    return this.#options.link;
  }

  #onWorkerFrame(frame: WorkerToEdgeFrame): void {
    if (this.#closed) return;
    switch (frame.kind) {
      case 'assistant_audio':
        this.#holdAudio(frame);
        return;
      case 'timeline':
        this.#settleOpen?.resolve();
        this.#settleOpen = undefined;
        this.#options.hooks?.observe(frame.event);
        this.#options.onTimeline?.(frame.event);
        this.#onTimeline(frame.event);
        return;
      case 'error': {
        this.#lastError = { code: frame.code, message: frame.message };
        // The first of each code is logged; repeats are counted and summed up when the call ends.
        // A congested worker link reports once a second per call: hundreds of lines a second at
        // load, written synchronously, which stalled the bridge's event loop for 100 ms at a time.
        const seen = this.#workerErrors.get(frame.code) ?? 0;
        this.#workerErrors.set(frame.code, seen + 1);
        if (seen === 0) log.warn({ session: this.sessionId, code: frame.code }, `worker error: ${frame.message}`);
        return;
      }
      case 'closed':
        this.#refuseOpen(frame.reason);
        this.#teardown();
        this.#options.media.hangUp(frame.reason);
        return;
    }
  }

  #holdAudio(frame: Extract<WorkerToEdgeFrame, { kind: 'assistant_audio' }>): void {
    this.#pendingAudio.set(`${frame.utteranceId}/${frame.audioChunkSeq}`, frame.pcm24k);
    // The worker sends each frame right before its event: one is the steady state, 8 bounds a worker that does not.
    if (this.#pendingAudio.size > 8) this.#pendingAudio.delete(this.#pendingAudio.keys().next().value!);
  }

  #onTimeline(event: TimelineEvent): void {
    switch (event.type) {
      case 'assistant.audio': {
        const { utteranceId, audioChunkSeq, startMs, durationMs } = event.data;
        const key = `${utteranceId}/${audioChunkSeq}`;
        const bytes = this.#pendingAudio.get(key);
        this.#pendingAudio.delete(key);
        if (bytes === undefined || this.#cut.has(utteranceId)) return;
        if (this.#speaking !== utteranceId) {
          this.#speaking = utteranceId;
          this.#downsampler.reset();
        }
        const pcm8k = this.#downsampler.process(bytesToPcm(bytes));
        this.#sender.enqueue(utteranceId, compand(this.#options.law, pcm8k), startMs, durationMs);
        return;
      }
      case 'assistant.utterance':
        if (event.data.phase === 'finished') this.#sender.finish(event.data.utteranceId);
        return;
      case 'assistant.interruption': {
        if (event.data.action === 'continue') return;
        // The runtime gave the caller the floor: nothing queued goes out, the far end drops what it holds.
        const cut = this.#sender.flush();
        const target = event.data.utteranceId;
        if (target !== null) this.#cut.add(target);
        for (const id of cut) this.#cut.add(id);
        this.#marks.clear();
        this.#clears += 1;
        this.#options.media.clear();
        return;
      }
      default:
        return;
    }
  }

  #ack(utteranceId: string, playedMs: number): void {
    this.#send({ kind: 'playback_ack', session: this.sessionId, utteranceId, playedMs, source: 'client' });
  }

  #send(frame: EdgeToWorkerFrame, evenIfClosed = false): void {
    if (this.#closed && !evenIfClosed) return;
    try {
      this.#link.send(frame);
    } catch (cause) {
      log.warn({ session: this.sessionId, err: toVenusError(cause) }, 'worker link refused a frame');
    }
  }

  #refuseOpen(reason: string): void {
    const settle = this.#settleOpen;
    if (settle === undefined) return;
    this.#settleOpen = undefined;
    const error = this.#lastError ?? { code: 'model_unavailable', message: `the session closed: ${reason}` };
    settle.reject(new VenusError(error.code, error.message));
  }

  #teardown(): void {
    this.#refuseOpen('the call ended');
    if (!this.#closed && [...this.#workerErrors.values()].some((n) => n > 1)) {
      log.warn(
        { session: this.sessionId, errors: Object.fromEntries(this.#workerErrors) },
        'worker errors during the call',
      );
    }
    this.#closed = true;
    this.#sender.close();
    this.#marks.clear();
    this.#pendingAudio.clear();
    this.#options.hooks?.ended();
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
