import { createLogger } from '@venus/protocol';
import { decodeBase64Strict, encodeBase64 } from '../../audio/base64.ts';
import type { Principal } from '../../auth/principal.ts';
import type { ProtocolError } from '../../realtime/protocol-error.ts';
import type { CallMedia, CallSession } from '../call-session.ts';
import { clearMessage, markMessage, mediaMessage, parseTwilioMessage } from './twilio-messages.ts';

const log = createLogger('edge.telephony.twilio');

/** The `<Parameter>` that carries the signed token (TwiML route). */
export const TOKEN_PARAMETER = 'venus_token';
/** Messages held while the token of `start` is checked (Twilio sends media right after it): 2 s of 20 ms frames. */
export const MAX_HELD_MESSAGES = 100;
/** Messages refused before the stream is closed as broken (each is logged once, counted always). */
const MAX_REFUSED = 1000;

export interface TwilioStreamOptions {
  /** One text message to Twilio. */
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Who the token in `start` acts for (the edge's own key and client-token checks). */
  authenticate(token: string | undefined): Promise<{ ok: true; principal: Principal } | { ok: false; message: string }>;
  /** Opens the call's session for that principal, or says why not. */
  openCall(media: CallMedia, principal: Principal): CallSession | ProtocolError;
}

/**
 * One Twilio Media Streams WebSocket (bidirectional `<Connect><Stream>`) driving one CallSession.
 * `start` must come first (after `connected`) and carry the signed token in its customParameters;
 * it picks the tenant and the assistant. Then `media` (μ-law 8 kHz base64) is the caller's voice,
 * `dtmf` a key, `mark` an echo: the audio sent before that mark has played (the playback
 * acknowledgement), `stop` the end of the call. Out go `media` (20 ms frames), a `mark` after each
 * chunk of assistant audio, and `clear` only when the runtime gives the caller the floor.
 * Every message is validated; a bad one is logged and counted (Twilio reads no replies) and the
 * stream lives on.
 *
 * @example
 *   const stream = new TwilioStream({ send: (t) => ws.send(t), close: (c, r) => ws.close(c, r), authenticate, openCall });
 *   ws.on('message', (data) => stream.handleMessage(String(data)));
 *   ws.on('close', () => stream.handleClose());
 */
export class TwilioStream {
  readonly #options: TwilioStreamOptions;
  #streamSid: string | undefined;
  #call: CallSession | undefined;
  /** Messages after `start` while its token is checked. */
  #held: string[] | undefined;
  #closed = false;
  refused = 0;

  constructor(options: TwilioStreamOptions) {
    this.#options = options;
  }

  get call(): CallSession | undefined {
    return this.#call;
  }

  handleMessage(data: unknown): void {
    if (this.#closed) return;
    if (typeof data !== 'string') {
      this.#refuse('binary messages are not part of Media Streams');
      return;
    }
    if (this.#held !== undefined) {
      if (this.#held.length >= MAX_HELD_MESSAGES) {
        this.#refuse('too many messages before start was accepted');
        return;
      }
      this.#held.push(data);
      return;
    }
    const parsed = parseTwilioMessage(data);
    if (!parsed.ok) {
      this.#refuse(parsed.message);
      return;
    }
    const message = parsed.message;
    if (message.event === 'connected') return;
    if (message.event === 'start') {
      if (this.#streamSid !== undefined) {
        this.#refuse('a second start on one stream');
        return;
      }
      this.#streamSid = message.streamSid;
      this.#held = [];
      void this.#start(message.start.customParameters[TOKEN_PARAMETER]);
      return;
    }
    const call = this.#call;
    if (call === undefined) {
      this.#refuse(`${message.event} before start`);
      return;
    }
    if (message.streamSid !== this.#streamSid) {
      this.#refuse(`${message.event} for another stream`);
      return;
    }
    switch (message.event) {
      case 'media': {
        if (message.media.track !== undefined && message.media.track !== 'inbound') return;
        const bytes = decodeBase64Strict(message.media.payload);
        if (bytes === undefined) {
          this.#refuse('media.payload is not base64');
          return;
        }
        call.receiveAudio(bytes);
        return;
      }
      case 'dtmf': {
        const error = call.receiveDtmf(message.dtmf.digit);
        if (error !== undefined) this.#refuse(error.message);
        return;
      }
      case 'mark':
        call.markPlayed(message.mark.name);
        return;
      case 'stop':
        this.#end('the call ended (stop)');
        return;
    }
  }

  /** The socket closed: the call's session ends. */
  handleClose(): void {
    this.#end('the Twilio stream closed');
  }

  async #start(token: string | undefined): Promise<void> {
    const verified = await this.#options.authenticate(token);
    if (this.#closed) return;
    if (!verified.ok) {
      this.#fail(1008, `start: ${verified.message}`);
      return;
    }
    if (!verified.principal.scopes.includes('realtime')) {
      this.#fail(1008, "start: the token lacks the 'realtime' scope");
      return;
    }
    const streamSid = this.#streamSid!;
    const opened = this.#options.openCall(
      {
        sendAudio: (frame) => this.#send(mediaMessage(streamSid, encodeBase64(frame))),
        sendMark: (name) => this.#send(markMessage(streamSid, name)),
        clear: () => this.#send(clearMessage(streamSid)),
        hangUp: (reason) => this.#fail(1000, reason),
      },
      verified.principal,
    );
    if (!('sessionId' in opened)) {
      this.#fail(1013, `start: ${opened.message}`);
      return;
    }
    this.#call = opened;
    log.info({ session: opened.sessionId, streamSid }, 'Twilio call started');
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const text of held) this.handleMessage(text);
  }

  #send(text: string): void {
    if (this.#closed) return;
    try {
      this.#options.send(text);
    } catch {
      // The socket is closing; its close event ends the call.
    }
  }

  #refuse(message: string): void {
    this.refused += 1;
    if (this.refused === 1 || this.refused % 100 === 0) {
      log.warn({ streamSid: this.#streamSid, refused: this.refused }, `invalid_event: ${message}`);
    }
    if (this.refused >= MAX_REFUSED) this.#fail(1008, 'too many invalid messages');
  }

  #fail(code: number, reason: string): void {
    if (this.#closed) return;
    if (code !== 1000) log.warn({ streamSid: this.#streamSid }, reason);
    this.#end(reason);
    this.#options.close(code, reason.slice(0, 120));
  }

  #end(reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#held = undefined;
    this.#call?.hangUp(reason);
  }
}
