import {
  type ClientEvent,
  type EdgeToWorkerFrame,
  type SessionConfig,
  toVenusError,
  type WorkerLink,
  type WorkerToEdgeFrame,
} from '@venus/protocol';
import { OutputAudioEncoder } from '../audio/output-audio-encoder.ts';
import type { SessionSettings } from '../auth/principal.ts';
import type { SessionHooks } from '../tenancy/session-hooks.ts';
import { AssistantResponses } from './assistant-responses.ts';
import { parseClientEvent } from './client-event-parser.ts';
import { ClientPlayback } from './client-playback.ts';
import type { Clock } from './clock.ts';
import { ConversationItems } from './conversation-items.ts';
import { eventSinkOf, serverEventJson } from './event-json.ts';
import { FunctionCalls } from './function-calls.ts';
import { CreatedItems } from './history-items.ts';
import { EventIds } from './ids.ts';
import { InputAudio } from './input-audio.ts';
import { InputAudioBuffer } from './input-audio-buffer.ts';
import { REMEMBERED_USER_ITEMS, RecentIds } from './item-checks.ts';
import type { OutboundEvent } from './outbound-event.ts';
import { errorEvent, type ProtocolError } from './protocol-error.ts';
import { closeReason, type RealtimeTransport } from './realtime-transport.ts';
import { sendResponseInstructions } from './response-instructions.ts';
import { ResponseRequests } from './response-requests.ts';
import { InputUsage } from './response-usage.ts';
import { applySessionUpdate, initialSessionState, type RealtimeSessionState, sessionObject } from './session-state.ts';
import { TimelineRelay } from './timeline-relay.ts';
import { UserAudioTurns } from './user-audio-turns.ts';

export interface RealtimeConnectionOptions {
  link: WorkerLink;
  transport: RealtimeTransport;
  tenant: string;
  sessionId: string;
  config: SessionConfig;
  clock?: Clock;
  /** Close the socket (1008) rather than queue more than this for a slow client. Default 8 MiB. */
  maxBufferedBytes?: number;
  /** The tenant's accounting: input audio admission, timeline observation, end of session. */
  hooks?: SessionHooks;
  /** Settings applied before `session.created` (from the client token that opened the session). */
  initialSession?: SessionSettings;
}

type EventOf<T extends ClientEvent['type']> = Extract<ClientEvent, { type: T }>;

/**
 * One client realtime socket bound to one worker session. Client events are validated and turned
 * into relay frames; the worker's timeline comes back as OpenAI-compatible and `venus.*` events.
 * Bad input is answered with an `error` event and the connection lives on.
 *
 * Input audio turns are decided by the runtime's own voice activity detection, or, with
 * `turn_detection: null`, by the client's commits (input-audio-buffer.ts); `response.create` asks
 * for what the next response the model begins carries (response-requests.ts).
 *
 * @example
 *   const connection = new RealtimeConnection({ link, transport, tenant: 'default', sessionId, config });
 *   connection.start();
 *   socket.on('message', (data) => connection.handleMessage(data));
 *   socket.on('close', (code) => connection.handleClose(code));
 */
export class RealtimeConnection {
  readonly #link: WorkerLink;
  readonly #transport: RealtimeTransport;
  readonly #tenant: string;
  readonly #maxBufferedBytes: number;
  /** The playout estimate, the client's playback acks, truncates and clears (client-playback.ts). */
  readonly #playback: ClientPlayback;
  readonly #responses: AssistantResponses;
  /** The client sent a GA `session.update` (`session.type: 'realtime'`): beta event aliases are not sent. */
  #gaClient = false;
  readonly #relay: TimelineRelay;
  readonly #userItems = new RecentIds(REMEMBERED_USER_ITEMS);
  /** User and assistant items in conversation order (previous_item_id chains, retrieve, delete). */
  readonly #conversation: ConversationItems;
  readonly #functionCalls: FunctionCalls;
  /** `conversation.item.create`: new turns and restored history (history-items.ts). */
  readonly #createdItems: CreatedItems;
  readonly #eventIds = new EventIds();
  readonly #hooks: SessionHooks | undefined;
  readonly #initialSession: SessionSettings | undefined;
  #state: RealtimeSessionState;
  readonly #input: InputAudio;
  #encoder: OutputAudioEncoder;
  #unsubscribe: (() => void) | undefined;
  #closed = false;
  readonly #audioBuffer: InputAudioBuffer;
  readonly #requests = new ResponseRequests();
  readonly #usage = new InputUsage(); // what the user sent towards the next response (its usage)

  constructor(options: RealtimeConnectionOptions) {
    this.#link = options.link;
    this.#transport = options.transport;
    this.#tenant = options.tenant;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? 8 * 1024 * 1024;
    this.#hooks = options.hooks;
    this.#initialSession = options.initialSession;
    this.#state = initialSessionState(options.sessionId, options.config);
    this.#input = new InputAudio({
      session: options.sessionId,
      hooks: options.hooks,
      send: (f) => this.#audioBuffer.relay(f),
    });
    this.#encoder = new OutputAudioEncoder(this.#state.outputFormat);
    const emit = (event: OutboundEvent) => this.#emit(event);
    this.#conversation = new ConversationItems({ emit, ga: () => this.#gaClient });
    const send = (frame: EdgeToWorkerFrame) => this.#send(frame);
    this.#playback = new ClientPlayback({
      sessionId: this.sessionId,
      emit,
      send,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      responses: () => this.#responses,
      userItems: this.#userItems,
      clientAcks: () => this.#state.playbackAcks,
      acknowledging: () => {
        this.#state = { ...this.#state, playbackAcks: true };
      },
    });
    const { estimator } = this.#playback;
    this.#responses = new AssistantResponses({
      emit,
      estimator,
      encoder: () => this.#encoder,
      betaAliases: () => !this.#gaClient,
      conversation: this.#conversation,
      modality: () => this.#state.outputModality,
      takeRequest: () => this.#requests.take(),
      takeInput: () => this.#usage.take(),
    });
    const turns = new UserAudioTurns({ emit, conversation: this.#conversation });
    const pushToTalk = () => this.#state.turnDetection === null;
    this.#audioBuffer = new InputAudioBuffer({
      session: this.sessionId,
      emit,
      send,
      pushToTalk,
      turns,
      usage: this.#usage,
    });
    const relayDeps = {
      emit,
      responses: this.#responses,
      estimator,
      conversation: this.#conversation,
      turns,
      pushToTalk,
      timelineAudio: () => this.#state.timelineAudio,
    };
    this.#relay = new TimelineRelay(relayDeps);
    const sendOutput = (output: { callId: string; output: string; eventId?: string }) =>
      this.#send({ kind: 'function_output', session: this.sessionId, ...output });
    this.#functionCalls = new FunctionCalls({ emit, conversation: this.#conversation, sendOutput });
    this.#createdItems = new CreatedItems({
      sessionId: this.sessionId,
      emit,
      conversation: this.#conversation,
      functionCalls: this.#functionCalls,
      userItems: this.#userItems,
      isAssistantItem: (id) => this.#responses.item(id) !== undefined,
      send,
    });
  }

  get sessionId(): string {
    return this.#state.id;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Opens the worker session and greets the client with `session.created`. */
  start(): void {
    const initial = this.#initialSession === undefined ? undefined : this.#applySettings(this.#initialSession);
    this.#unsubscribe = this.#link.onFrame(this.sessionId, (frame) => this.#onWorkerFrame(frame));
    this.#send({ kind: 'open', session: this.sessionId, tenant: this.#tenant, config: this.#state.config });
    this.#emit({ type: 'session.created', session: sessionObject(this.#state) });
    if (initial !== undefined && !initial.ok) this.#error(initial.error, null);
  }

  /** Turns the client away before any worker session exists: one `error` event, then close 1013 (try again later). */
  refuse(error: ProtocolError): void {
    this.#error(error, null);
    this.#teardown();
    this.#transport.close(1013, closeReason(error.message));
  }

  /**
   * The server ends a live session (its API key was revoked): one `error` event, the worker
   * session closed, then the socket closed with `code` (1008, policy violation, by default).
   */
  end(error: ProtocolError, code = 1008): void {
    if (this.#closed) return;
    this.#error(error, null);
    this.#teardown();
    this.#send({ kind: 'close', session: this.sessionId, reason: error.message }, true);
    this.#transport.close(code, closeReason(error.message));
  }

  /** One message from the client socket: a string for text frames, anything else is binary. */
  handleMessage(data: unknown): void {
    if (this.#closed) return;
    if (typeof data !== 'string') {
      this.#error({ code: 'invalid_event', message: 'binary messages are not supported: send JSON text events' }, null);
      return;
    }
    if (this.#input.plainAppend(data, (error) => this.#error(error, null))) return; // no JSON.parse
    const parsed = parseClientEvent(data, this.sessionId);
    if (!parsed.ok) {
      this.#error(parsed.error, parsed.clientEventId);
      return;
    }
    this.#dispatch(parsed.event);
  }

  /** Microphone samples at 24 kHz from a transport with its own media (WebRTC): admitted as an append is. */
  handleAudioPcm(pcm24k: Int16Array): void {
    const error = this.#closed ? undefined : this.#input.appendPcm24k(pcm24k);
    if (error !== undefined) this.#error(error, null);
  }

  /** The client socket closed: end the worker session. */
  handleClose(code?: number, reason?: string): void {
    if (this.#closed) return;
    this.#teardown();
    const why = reason ? `client closed (${code ?? 1005}): ${reason}` : `client closed (${code ?? 1005})`;
    this.#send({ kind: 'close', session: this.sessionId, reason: why }, true);
  }

  #dispatch(event: ClientEvent): void {
    const error = this.#handle(event);
    if (error !== undefined) this.#error(error, event.event_id ?? null);
  }

  /** Applies one valid client event; a returned error is reported and changes nothing. */
  #handle(event: ClientEvent): ProtocolError | undefined {
    const session = this.sessionId;
    switch (event.type) {
      case 'session.update':
        return this.#sessionUpdate(event);
      case 'input_audio_buffer.append':
        return this.#input.appendBase64(event.audio);
      case 'input_audio_buffer.commit':
        return this.#audioBuffer.commit();
      case 'input_audio_buffer.clear':
        this.#audioBuffer.clear();
        return undefined;
      case 'conversation.item.create':
        return this.#createdItems.create(event);
      case 'conversation.item.truncate':
        return this.#playback.truncate(event);
      case 'conversation.item.retrieve':
        return this.#conversation.retrieve(event.item_id);
      case 'conversation.item.delete':
        return this.#conversation.delete(event.item_id);
      case 'response.create':
        return this.#requests.create(
          event.response,
          (e) => this.#emit(e),
          (response) => sendResponseInstructions(response, session, (frame) => this.#send(frame)),
        );
      case 'response.cancel':
        this.#playback.cancel();
        return undefined;
      case 'output_audio_buffer.clear':
        this.#playback.clear();
        return undefined;
      case 'venus.playback.ack':
        return this.#playback.ack(event);
      case 'venus.work.cancel': {
        const eventId = event.event_id === undefined ? {} : { eventId: event.event_id };
        this.#send({ kind: 'cancel_work', session, workId: event.work_id, ...eventId });
        return undefined;
      }
    }
  }

  #sessionUpdate(event: EventOf<'session.update'>): ProtocolError | undefined {
    // GA clients name the session type; beta clients never do.
    if ((event.session as { type?: unknown }).type === 'realtime') this.#gaClient = true;
    const result = this.#applySettings(event.session);
    if (!result.ok) return result.error;
    this.#send({ kind: 'config', session: this.sessionId, config: result.state.config });
    this.#emit({ type: 'session.updated', session: sessionObject(result.state) });
    for (const notice of result.notices) this.#emit({ type: 'venus.notice', ...notice });
    return undefined;
  }

  #applySettings(settings: SessionSettings): ReturnType<typeof applySessionUpdate> {
    const result = applySessionUpdate(this.#state, settings);
    if (!result.ok) return result;
    const { outputFormat } = this.#state;
    this.#state = result.state;
    this.#input.setFormat(result.state.inputFormat);
    if (result.state.outputFormat !== outputFormat) this.#encoder = new OutputAudioEncoder(result.state.outputFormat);
    return result;
  }

  #onWorkerFrame(frame: WorkerToEdgeFrame): void {
    if (this.#closed) return;
    switch (frame.kind) {
      case 'assistant_audio':
      case 'handover':
        this.#relay.sideFrame(frame);
        return;
      case 'timeline':
        this.#hooks?.observe(frame.event);
        this.#relay.handle(frame.event);
        if (frame.event.type === 'work.client_call') this.#functionCalls.call(frame.event.data);
        return;
      case 'error':
        this.#error({ code: frame.code, message: frame.message }, null);
        return;
      case 'closed':
        this.#teardown();
        this.#transport.close(1000, closeReason(frame.reason));
        return;
    }
  }

  #error(error: ProtocolError, clientEventId: string | null): void {
    this.#emit(errorEvent(error, clientEventId));
  }

  #emit(event: OutboundEvent): void {
    if (this.#closed) return;
    const buffered = this.#transport.bufferedAmount?.() ?? 0;
    if (buffered > this.#maxBufferedBytes) {
      // A client that cannot keep up is cut off rather than allowed to grow this process's memory.
      this.#teardown();
      this.#send({ kind: 'close', session: this.sessionId, reason: 'slow client' }, true);
      this.#transport.close(1008, closeReason(`slow client: over ${this.#maxBufferedBytes} bytes of events unsent`));
      return;
    }
    const eventId = this.#eventIds.next();
    const sink = eventSinkOf(this.#transport); // WebRTC takes events as objects, audio as samples
    try {
      if (sink === undefined) this.#transport.send(serverEventJson(event, eventId));
      else sink.event(event, eventId);
    } catch {
      // The socket is closing; its close event ends the session.
    }
  }

  #send(frame: EdgeToWorkerFrame, evenIfClosed = false): void {
    if (this.#closed && !evenIfClosed) return;
    if (frame.kind === 'text') this.#usage.text(frame.text.length);
    try {
      this.#link.send(frame);
    } catch (cause) {
      const error = toVenusError(cause);
      if (!this.#closed) this.#error({ code: error.code, message: `worker link: ${error.message}` }, null);
    }
  }

  #teardown(): void {
    this.#closed = true;
    this.#hooks?.ended();
    this.#playback.estimator.stop();
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
