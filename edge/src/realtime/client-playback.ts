import type { ClientEvent, EdgeToWorkerFrame } from '@venus/protocol';
import type { AssistantResponses } from './assistant-responses.ts';
import type { Clock } from './clock.ts';
import { assistantItemError, type NamedItem, type RecentIds, truncateError } from './item-checks.ts';
import type { Emit } from './outbound-event.ts';
import { PlayoutEstimator } from './playout-estimator.ts';
import type { ProtocolError } from './protocol-error.ts';

type EventOf<T extends ClientEvent['type']> = Extract<ClientEvent, { type: T }>;

export interface ClientPlaybackDeps {
  sessionId: string;
  emit: Emit;
  send(frame: EdgeToWorkerFrame): void;
  clock?: Clock;
  /** The responses are made after this: they time their audio with its estimator. */
  responses(): AssistantResponses;
  /** The client's own item ids: an ack or a truncate naming one is refused as such. */
  userItems: RecentIds;
  /** The client acknowledges playback itself (`venus.playback_acks`, or it sent an ack). */
  clientAcks(): boolean;
  /** The client sent a `venus.playback.ack`: from now on its acknowledgements are the only ones. */
  acknowledging(): void;
}

/**
 * What the client plays of the assistant's audio, as the worker learns it: the playout estimate
 * for a client that never says (a plain OpenAI Realtime client), the client's own acknowledgements
 * (`venus.playback.ack`) and cuts (`conversation.item.truncate`), each checked against the item it
 * names, and the client stopping the audio (`response.cancel`, `output_audio_buffer.clear`). The
 * worker keeps in its context only what the user heard, so every one of these becomes a
 * `playback_ack` or a `cancel_response` frame.
 *
 * @example
 *   const playback = new ClientPlayback({ sessionId, emit, send, responses: () => responses, userItems, clientAcks, acknowledging });
 *   playback.ack({ type: 'venus.playback.ack', item_id: 'utt_1', played_ms: 800 });
 *   playback.clear(); // the worker cancels the response; the client gets output_audio_buffer.cleared
 */
export class ClientPlayback {
  readonly estimator: PlayoutEstimator;
  readonly #deps: ClientPlaybackDeps;

  constructor(deps: ClientPlaybackDeps) {
    this.#deps = deps;
    this.estimator = new PlayoutEstimator({
      ...(deps.clock === undefined ? {} : { clock: deps.clock }),
      onAck: (utteranceId, playedMs) => {
        // An acknowledging client's own reports are authoritative: the estimate then only times
        // `output_audio_buffer.stopped` and tells the timeline relay whether the assistant still holds the floor.
        if (deps.clientAcks()) return;
        deps.send({ kind: 'playback_ack', session: deps.sessionId, utteranceId, playedMs, source: 'estimate' });
      },
      onPlayed: (utteranceId) => {
        const item = deps.responses().item(utteranceId);
        if (item?.audioStarted) deps.emit({ type: 'output_audio_buffer.stopped', response_id: item.responseId });
      },
    });
  }

  /** `response.cancel`: the worker cancels the response being spoken. */
  cancel(): void {
    this.#deps.responses().markCancelRequested();
    this.#deps.send({ kind: 'cancel_response', session: this.#deps.sessionId });
  }

  /** `output_audio_buffer.clear`: the audio the client holds is dropped, and the response it belongs to cancelled. */
  clear(): void {
    const { emit, send, sessionId } = this.#deps;
    const responses = this.#deps.responses();
    const streaming = responses.activeUtteranceIds()[0];
    responses.markCancelRequested();
    const cleared = this.estimator.clear();
    send({ kind: 'cancel_response', session: sessionId });
    const itemId = streaming ?? cleared[cleared.length - 1];
    const responseId = itemId === undefined ? null : (responses.item(itemId)?.responseId ?? null);
    emit({ type: 'output_audio_buffer.cleared', response_id: responseId });
  }

  ack(event: EventOf<'venus.playback.ack'>): ProtocolError | undefined {
    const error = assistantItemError(event.item_id, this.#named(event.item_id));
    if (error !== undefined) return error;
    this.#deps.acknowledging();
    const { item_id: utteranceId, played_ms: playedMs } = event;
    // The worker answers what only it can check (the work, the item) with a session.error naming this event.
    const eventId = event.event_id === undefined ? {} : { eventId: event.event_id };
    this.#deps.send({
      kind: 'playback_ack',
      session: this.#deps.sessionId,
      utteranceId,
      playedMs,
      source: 'client',
      ...eventId,
    });
    return undefined;
  }

  truncate(event: EventOf<'conversation.item.truncate'>): ProtocolError | undefined {
    const error = truncateError(event, this.#named(event.item_id));
    if (error !== undefined) return error;
    const { item_id: utteranceId, audio_end_ms: playedMs } = event;
    this.estimator.truncate(utteranceId);
    this.#deps.send({ kind: 'playback_ack', session: this.#deps.sessionId, utteranceId, playedMs, source: 'truncate' });
    this.#deps.emit({
      type: 'conversation.item.truncated',
      item_id: utteranceId,
      content_index: 0,
      audio_end_ms: playedMs,
    });
    return undefined;
  }

  #named(itemId: string): NamedItem {
    return {
      sessionId: this.#deps.sessionId,
      sentMs: this.#deps.responses().item(itemId)?.audioMs,
      userItem: this.#deps.userItems.has(itemId),
    };
  }
}
