import { z } from 'zod';
import type { ProtocolError } from '../realtime/protocol-error.ts';
import {
  LIVE_UNSUPPORTED,
  type LiveClientEvent,
  LiveClientEventSchema,
  type LiveSessionConfig,
} from './live-events.ts';

type Json = Record<string, unknown>;

/** What one Live client message becomes: realtime client events to run, Live events to answer, or the end. */
export type Inbound =
  | { kind: 'forward'; events: Json[] }
  | { kind: 'error'; error: ProtocolError; clientEventId: string | null }
  | { kind: 'close' };

export interface LiveDialectOptions {
  /** Milliseconds since the session began (the Live timeline's clock). */
  nowMs(): number;
}

/** Outstanding forwarded events whose answer becomes a Live acknowledgement; bounded by what a client sends unanswered. */
const MAX_PENDING = 256;

/**
 * GPT-Live over the realtime session machinery: Live client events become the realtime client
 * events RealtimeConnection runs, and its OpenAI Realtime server events become Live server events.
 * So one session implementation serves both dialects; the cost is one JSON parse per outbound
 * event (the Live path is not on the relay's hot path yet). Mappings:
 * - `session.start` -> `session.update` (GA; instructions, voice, audio format, client delegation
 *   as `venus.delegation: "client"`), then its `input` user items as typed user turns (developer
 *   items join the instructions); its `session.updated` -> `session.started`;
 * - `session.input_audio.append` -> `input_audio_buffer.append`;
 * - `session.instructions.append` -> instructions appended (`session.update`), acknowledged by
 *   `session.instructions.appended`;
 * - a delegation's result (`session.commentary.append` with `delegation_id`, or `response.item.create`
 *   with a `function_call_output` whose `call_id` is the delegation id) -> the client call's
 *   `function_call_output`, acknowledged (commentary) by `session.commentary.appended`;
 * - out: audio and transcript deltas, `venus.function_call` -> `session.delegation.created`
 *   (`target: "client"`, plus `venus.query`: GPT-Live's event carries no task text), usage after
 *   each response, errors, `venus.*` as they are.
 * Timeline offsets (`start_ms`/`end_ms`) are the edge's clock when an event goes out, not audio positions.
 */
export class LiveDialect {
  readonly #options: LiveDialectOptions;
  #started = false;
  #session: Json = {};
  #instructions = '';
  #counter = 0;
  /** Forwarded event id -> the client's own id, and what its success acknowledges. */
  readonly #pending = new Map<string, { clientEventId: string | null; ack: 'started' | 'instructions' | 'none' }>();
  /** Delegation ids whose commentary awaits its acknowledgement. */
  readonly #commentary = new Map<string, string | null>();

  constructor(options: LiveDialectOptions) {
    this.#options = options;
  }

  get started(): boolean {
    return this.#started;
  }

  inbound(text: string): Inbound {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return refuse('invalid_json', 'message is not valid JSON', null);
    }
    const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
    const clientEventId = typeof object?.event_id === 'string' ? object.event_id : null;
    if (object === undefined) return refuse('invalid_event', 'a client event must be a JSON object', null);
    const type = object.type;
    if (typeof type === 'string' && type in LIVE_UNSUPPORTED) {
      return refuse('unsupported_feature', `${type}: ${LIVE_UNSUPPORTED[type]}`, clientEventId);
    }
    const parsed = LiveClientEventSchema.safeParse(object);
    if (!parsed.success) {
      const known = parsed.error.issues[0]?.path[0] !== 'type';
      const message = known
        ? `${String(type)}: ${z.prettifyError(parsed.error)}`
        : `unknown event type ${JSON.stringify(type)}`;
      return refuse(known ? 'invalid_event' : 'unknown_event_type', message, clientEventId);
    }
    const event = parsed.data;
    if (!this.#started && event.type !== 'session.start' && event.type !== 'session.close') {
      return refuse('invalid_event', `${event.type} before session.start: start the session first`, clientEventId);
    }
    return this.#translate(event, clientEventId);
  }

  #translate(event: LiveClientEvent, clientEventId: string | null): Inbound {
    switch (event.type) {
      case 'session.start':
        if (this.#started) return refuse('invalid_event', 'the session has started already', clientEventId);
        return this.#start(event.session, clientEventId);
      case 'session.input_audio.append':
        return forward({
          type: 'input_audio_buffer.append',
          event_id: this.#id(clientEventId, 'none'),
          audio: event.audio,
        });
      case 'session.instructions.append': {
        if (event.delegation_id !== null) {
          return refuse('unsupported_feature', 'instructions for one delegation are not supported', clientEventId);
        }
        this.#instructions = this.#instructions === '' ? event.content : `${this.#instructions}\n\n${event.content}`;
        const session = { type: 'realtime', instructions: this.#instructions };
        return forward({ type: 'session.update', event_id: this.#id(clientEventId, 'instructions'), session });
      }
      case 'session.commentary.append':
        if (event.delegation_id === null) {
          return refuse('unsupported_feature', 'commentary outside a delegation is not supported', clientEventId);
        }
        this.#commentary.set(event.delegation_id, clientEventId);
        if (this.#commentary.size > MAX_PENDING) this.#commentary.delete(this.#commentary.keys().next().value ?? '');
        return this.#result(event.delegation_id, event.content, clientEventId);
      case 'response.item.create':
        return this.#result(event.item.call_id, event.item.output, clientEventId);
      case 'session.close':
        return { kind: 'close' };
    }
  }

  #start(config: LiveSessionConfig, clientEventId: string | null): Inbound {
    const delegation = config.delegation?.type;
    if (delegation === 'responses' || delegation === 'decisions') {
      const message = `${delegation} delegation is not supported: use { type: "client" } (or none, for the server's functions)`;
      return {
        kind: 'error',
        error: { code: 'unsupported_feature', message, param: 'session.delegation.type' },
        clientEventId,
      };
    }
    const input = config.input ?? [];
    if (input.some((item) => item.role === 'assistant')) {
      const message = 'assistant items in session.input are not supported: the model speaks its own turns';
      return { kind: 'error', error: { code: 'unsupported_feature', message, param: 'session.input' }, clientEventId };
    }
    const textOf = (item: (typeof input)[number]) => item.content.map((part) => part.text).join('');
    const developer = input.filter((item) => item.role === 'developer').map(textOf);
    const format = config.audio?.format;
    const voice = config.audio?.output?.voice;
    this.#instructions = [config.instructions ?? '', ...developer].filter((t) => t !== '').join('\n\n');
    this.#session = {
      model: config.model,
      instructions: this.#instructions,
      ...(config.audio === undefined ? {} : { audio: config.audio }),
      delegation: config.delegation ?? null,
    };
    const session = {
      type: 'realtime',
      ...(this.#instructions === '' ? {} : { instructions: this.#instructions }),
      audio: {
        ...(format === undefined ? {} : { input: { format } }),
        output: { ...(format === undefined ? {} : { format }), ...(voice === undefined ? {} : { voice }) },
      },
      venus: { delegation: delegation === 'client' ? 'client' : 'harness' },
    };
    const update = { type: 'session.update', event_id: this.#id(clientEventId, 'started'), session };
    const turns = input
      .filter((item) => item.role === 'user')
      .map((item) => ({
        type: 'conversation.item.create',
        event_id: this.#id(clientEventId, 'none'),
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: textOf(item) }] },
      }));
    return { kind: 'forward', events: [update, ...turns] };
  }

  #result(callId: string, output: string, clientEventId: string | null): Inbound {
    const item = { type: 'function_call_output', call_id: callId, output };
    return forward({ type: 'conversation.item.create', event_id: this.#id(clientEventId, 'none'), item });
  }

  /** Live server events for one realtime server event (often none). */
  outbound(event: Json): Json[] {
    const eventId = typeof event.event_id === 'string' ? event.event_id : `evt_live_${++this.#counter}`;
    const at = Math.round(this.#options.nowMs());
    switch (event.type) {
      case 'session.updated':
        return this.#updated(eventId, event.session as Json | undefined);
      case 'response.output_audio.delta':
        return [{ type: 'session.output_audio.delta', delta: event.delta, start_ms: at, end_ms: at }];
      case 'response.output_audio_transcript.delta':
        return [
          { type: 'session.output_transcript.delta', event_id: eventId, delta: event.delta, start_ms: at, end_ms: at },
        ];
      case 'conversation.item.input_audio_transcription.delta':
        return [
          { type: 'session.input_transcript.delta', event_id: eventId, delta: event.delta, start_ms: at, end_ms: at },
        ];
      case 'venus.function_call':
        return [this.#delegationCreated(eventId, event, at)];
      case 'conversation.item.done':
        return this.#commentaryAppended(eventId, event.item as Json | undefined, at);
      case 'response.done':
        return [{ type: 'session.usage.updated', event_id: eventId, usage: this.usage() }];
      case 'error':
        return [this.#error(eventId, event)];
      default:
        return typeof event.type === 'string' && event.type.startsWith('venus.') ? [event] : [];
    }
  }

  /** The `session.closed` event for a session that ends with `reason`. */
  closed(reason: 'close_requested' | 'expired' | 'connection_lost'): Json {
    return {
      type: 'session.closed',
      event_id: `evt_live_${++this.#counter}`,
      reason,
      session: this.resource(),
      usage: this.usage(),
    };
  }

  usage(): { seconds: number } {
    return { seconds: Math.round(this.#options.nowMs()) / 1000 };
  }

  resource(): Json {
    return { id: this.#session.id ?? null, object: 'live.session', status: 'active', expires_at: 0, ...this.#session };
  }

  #updated(eventId: string, session: Json | undefined): Json[] {
    if (session?.id !== undefined) this.#session = { ...this.#session, id: session.id };
    const pending = this.#take();
    if (pending?.ack === 'started') {
      this.#started = true;
      return [
        { type: 'session.started', event_id: eventId, session: this.resource(), ...clientId(pending.clientEventId) },
      ];
    }
    if (pending?.ack === 'instructions') {
      const at = Math.round(this.#options.nowMs());
      return [
        {
          type: 'session.instructions.appended',
          event_id: eventId,
          start_ms: at,
          end_ms: at,
          ...clientId(pending.clientEventId),
        },
      ];
    }
    return [];
  }

  #delegationCreated(eventId: string, event: Json, at: number): Json {
    let query: unknown = event.arguments;
    try {
      query = (JSON.parse(String(event.arguments)) as { query?: unknown }).query ?? event.arguments;
    } catch {
      // arguments that are not JSON go as they are
    }
    return {
      type: 'session.delegation.created',
      event_id: eventId,
      offset_ms: at,
      delegation: { id: event.call_id, target: 'client', type: 'delegation' },
      venus: { work_id: event.work_id, name: event.name, query },
    };
  }

  #commentaryAppended(eventId: string, item: Json | undefined, at: number): Json[] {
    if (item?.type !== 'function_call_output' || typeof item.call_id !== 'string') return [];
    if (!this.#commentary.has(item.call_id)) return [];
    const clientEventId = this.#commentary.get(item.call_id) ?? null;
    this.#commentary.delete(item.call_id);
    return [
      { type: 'session.commentary.appended', event_id: eventId, start_ms: at, end_ms: at, ...clientId(clientEventId) },
    ];
  }

  #error(eventId: string, event: Json): Json {
    const error = (event.error ?? {}) as Json;
    const forwarded = typeof error.event_id === 'string' ? error.event_id : undefined;
    const pending = forwarded === undefined ? undefined : this.#pending.get(forwarded);
    if (forwarded !== undefined) this.#pending.delete(forwarded);
    const clientEventId = pending === undefined ? (forwarded ?? null) : pending.clientEventId;
    const { event_id: _forwarded, ...detail } = error;
    return {
      type: 'error',
      event_id: eventId,
      error: { ...detail, client_event_id: clientEventId },
      ...clientId(clientEventId),
    };
  }

  /** The pending acknowledgement a `session.updated` answers: the oldest one waiting for an update. */
  #take() {
    for (const [id, pending] of this.#pending) {
      if (pending.ack === 'none') continue;
      this.#pending.delete(id);
      return pending;
    }
    return undefined;
  }

  #id(clientEventId: string | null, ack: 'started' | 'instructions' | 'none'): string {
    const id = `live_${++this.#counter}`;
    if (ack !== 'none' || clientEventId !== null) {
      this.#pending.set(id, { clientEventId, ack });
      if (this.#pending.size > MAX_PENDING) this.#pending.delete(this.#pending.keys().next().value ?? '');
    }
    return id;
  }
}

function forward(event: Json): Inbound {
  return { kind: 'forward', events: [event] };
}

function refuse(code: ProtocolError['code'], message: string, clientEventId: string | null): Inbound {
  return { kind: 'error', error: { code, message }, clientEventId };
}

function clientId(id: string | null): Json {
  return id === null ? {} : { client_event_id: id };
}
