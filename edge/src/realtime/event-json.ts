import { AudioDelta } from '../audio/audio-delta.ts';
import type { OutboundEvent } from './outbound-event.ts';
import type { RealtimeTransport } from './realtime-transport.ts';

/**
 * A transport that takes server events as objects (before serialisation) instead of text: WebRTC,
 * whose audio deltas become RTP and whose other events go on the data channel as the text
 * `serverEventJson` makes. A RealtimeConnection gives its events to `events` when the transport
 * has one, and `send`s text otherwise.
 */
export interface ServerEventSink {
  /** One server event and the `event_id` it goes out with; an audio delta's `delta` is an AudioDelta. */
  event(event: OutboundEvent, eventId: string): void;
}

export interface TypedRealtimeTransport extends RealtimeTransport {
  readonly events: ServerEventSink;
}

/** The transport's event sink, if it takes events as objects. */
export function eventSinkOf(transport: RealtimeTransport): ServerEventSink | undefined {
  return (transport as Partial<TypedRealtimeTransport>).events;
}

const AUDIO_DELTA_TYPES = new Set(['response.output_audio.delta', 'response.audio.delta']);

/**
 * The JSON text of a server event with its `event_id` first. An audio delta's base64 (20 ms is
 * 1,280 characters, 50 a second per session) is put in as it is: `JSON.stringify` of the whole
 * event scans every character of it for escaping (about 9 µs a delta, against well under 1 µs);
 * its other fields are stringified one by one, in the event's own key order. Everything else is
 * `JSON.stringify` once, the id spliced in front (no copy of the event object per message).
 *
 * @example
 *   serverEventJson({ type: 'input_audio_buffer.cleared' }, 'event_1');
 *   // '{"event_id":"event_1","type":"input_audio_buffer.cleared"}'
 */
export function serverEventJson(event: OutboundEvent, eventId: string): string {
  const head = `{"event_id":${JSON.stringify(eventId)},`;
  if (!AUDIO_DELTA_TYPES.has(event.type) || !(event.delta instanceof AudioDelta)) {
    return head + JSON.stringify(event).slice(1);
  }
  const keys = Object.keys(event);
  const { type, response_id, item_id, output_index, content_index } = event;
  if (
    keys.length === DELTA_KEYS.length &&
    keys.every((key, i) => key === DELTA_KEYS[i]) &&
    typeof response_id === 'string' &&
    typeof item_id === 'string' &&
    Number.isSafeInteger(output_index) &&
    Number.isSafeInteger(content_index)
  ) {
    // The shape AssistantResponses sends, written out (a loop over the keys costs a few µs more).
    return (
      `${head}"type":"${type}","response_id":${JSON.stringify(response_id)},"item_id":${JSON.stringify(item_id)},` +
      `"output_index":${JSON.stringify(output_index)},"content_index":${JSON.stringify(content_index)},` +
      `"delta":"${event.delta.base64}"}`
    );
  }
  let text = head;
  let first = true;
  for (const key of keys) {
    const value = event[key];
    const json = value instanceof AudioDelta ? `"${value.base64}"` : JSON.stringify(value);
    if (json === undefined) continue; // as JSON.stringify leaves out undefined and functions
    text += `${first ? '' : ','}${JSON.stringify(key)}:${json}`;
    first = false;
  }
  return `${text}}`;
}

/** An audio delta's keys in the order AssistantResponses gives them. */
const DELTA_KEYS = ['type', 'response_id', 'item_id', 'output_index', 'content_index', 'delta'];
