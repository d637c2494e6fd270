import { AudioDelta } from '../audio/audio-delta.ts';
import type { OutputAudioEncoder } from '../audio/output-audio-encoder.ts';
import {
  type ConversationItem,
  type ConversationItems,
  type ItemContent,
  type MessageItem,
  presentContent,
} from './conversation-items.ts';
import { randomId } from './ids.ts';
import type { Emit } from './outbound-event.ts';
import { betaModalities, gaModalities, type OutputModality } from './output-modalities.ts';
import type { PlayoutEstimator } from './playout-estimator.ts';
import type { ResponseRequest } from './response-requests.ts';
import { responseUsage, type UsageCounts } from './response-usage.ts';

export type UtteranceEndReason = 'completed' | 'discarded' | 'repaired' | 'parked';

interface AssistantItem {
  itemId: string;
  responseId: string;
  transcript: string;
  audioMs: number;
  audioStarted: boolean;
  done: boolean;
  cancelRequested: boolean;
  /** `text`: output_text events and content, no audio events (the samples still time the playout estimate). */
  modality: OutputModality;
  metadata: Record<string, string> | null;
  /** What the user sent towards this response (its usage's input). */
  input: UsageCounts;
}

export interface AssistantResponsesDeps {
  emit: Emit;
  estimator: PlayoutEstimator;
  /** The encoder for the client's current output format. */
  encoder(): OutputAudioEncoder;
  /** Whether to also send the beta event names (`response.audio.delta`, …); false for GA clients. */
  betaAliases?(): boolean;
  /** The conversation the assistant items join, in order after the items before them. */
  conversation: ConversationItems;
  /** The session's output modality; a `response.create` may ask another for the next response. */
  modality?(): OutputModality;
  /** The oldest `response.create` not yet taken: the next response the model begins carries it. */
  takeRequest?(): ResponseRequest | undefined;
  /** What the user sent since the last response began (taken by the response beginning). */
  takeInput?(): UsageCounts;
}

/** How many finished assistant items are remembered for truncation and playback acks. */
const REMEMBERED_ITEMS = 512;

/**
 * Presents the worker's assistant utterances as OpenAI responses: one response per utterance,
 * one assistant message item (id = utterance id) with one audio content part (`output_audio`, beta
 * `audio`) whose transcript is the utterance text; the item joins the conversation when it starts. GA event names go out together with the beta aliases clients still listen for,
 * until a client shows it speaks GA (then the aliases would only double its audio bandwidth).
 *
 * @example
 *   responses.started('utt_1');          // response.created, output_item.added, content_part.added
 *   responses.audio('utt_1', pcm24k, 80); // output_audio_buffer.started, response.output_audio.delta …
 *   responses.finish('utt_1', 'completed'); // … response.done
 */
export class AssistantResponses {
  readonly #deps: AssistantResponsesDeps;
  readonly #items = new Map<string, AssistantItem>();

  constructor(deps: AssistantResponsesDeps) {
    this.#deps = deps;
  }

  #names(ga: string, beta: string): string[] {
    return this.#deps.betaAliases?.() === false ? [ga] : [ga, beta];
  }

  started(utteranceId: string, continues?: string): void {
    if (this.#items.has(utteranceId)) return;
    this.#begin(utteranceId, continues);
  }

  text(utteranceId: string, delta: string): void {
    const item = this.#live(utteranceId);
    if (item === undefined) return;
    item.transcript += delta;
    const names =
      item.modality === 'text'
        ? this.#names('response.output_text.delta', 'response.text.delta')
        : this.#names('response.output_audio_transcript.delta', 'response.audio_transcript.delta');
    for (const type of names) {
      this.#deps.emit({ type, ...this.#where(item), delta });
    }
  }

  audio(utteranceId: string, pcm24k: Int16Array, durationMs: number): void {
    const item = this.#live(utteranceId);
    if (item === undefined) return;
    item.audioMs += durationMs;
    // A text response's speech is not sent; the estimate still paces the worker as if it played.
    this.#deps.estimator.audioSent(utteranceId, durationMs);
    if (item.modality === 'text') return;
    if (!item.audioStarted) {
      item.audioStarted = true;
      this.#deps.emit({ type: 'output_audio_buffer.started', response_id: item.responseId });
    }
    // Encoded when serialised, once for both names; a WebRTC transport takes the samples instead.
    const delta = new AudioDelta(pcm24k, this.#deps.encoder());
    for (const type of this.#names('response.output_audio.delta', 'response.audio.delta')) {
      this.#deps.emit({ type, ...this.#where(item), delta });
    }
  }

  /** Ends the response; anything but `completed` reports it cancelled. Later deltas for it are dropped. */
  finish(utteranceId: string, reason: UtteranceEndReason): void {
    const item = this.#items.get(utteranceId);
    if (item === undefined || item.done) return;
    item.done = true;
    const { emit } = this.#deps;
    const where = this.#where(item);
    const part = this.#finishPart(item);
    emit({ type: 'response.content_part.done', ...where, part: this.#present(part) });
    const completed = reason === 'completed';
    const finished: MessageItem = messageItem(item, completed ? 'completed' : 'incomplete', [part]);
    const message = this.#deps.conversation.present(finished);
    emit({ type: 'response.output_item.done', response_id: item.responseId, output_index: 0, item: message });
    this.#deps.conversation.done(item.itemId, { status: finished.status, content: finished.content });
    const { usage, venus } = responseUsage(item.input, { audioMs: item.audioMs, textChars: item.transcript.length });
    emit({
      type: 'response.done',
      response: {
        ...this.#responseObject(item, completed ? 'completed' : 'cancelled'),
        usage,
        status_details: completed
          ? null
          : { type: 'cancelled', reason: item.cancelRequested ? 'client_cancelled' : 'turn_detected' },
        output: [message],
        venus: { reason, ...venus },
      },
    });
    this.#deps.estimator.finished(utteranceId);
    this.#forgetOldest();
  }

  /** The client asked to cancel: the next cancelled ending of the active responses is the client's doing. */
  markCancelRequested(): void {
    for (const item of this.#items.values()) if (!item.done) item.cancelRequested = true;
  }

  isActive(): boolean {
    for (const item of this.#items.values()) if (!item.done) return true;
    return false;
  }

  activeUtteranceIds(): string[] {
    return [...this.#items.values()].filter((item) => !item.done).map((item) => item.itemId);
  }

  /** An assistant item of this session, finished or not. */
  item(
    itemId: string,
  ): { responseId: string; audioMs: number; audioStarted: boolean; cancelRequested: boolean } | undefined {
    return this.#items.get(itemId);
  }

  #live(utteranceId: string): AssistantItem | undefined {
    // Deltas without a `started` open their response; deltas after the end (a cancelled response) are dropped.
    const item = this.#items.get(utteranceId) ?? this.#begin(utteranceId);
    return item.done ? undefined : item;
  }

  #begin(utteranceId: string, continues?: string): AssistantItem {
    const request = this.#deps.takeRequest?.();
    const item: AssistantItem = {
      itemId: utteranceId,
      responseId: randomId('resp'),
      transcript: '',
      audioMs: 0,
      audioStarted: false,
      done: false,
      cancelRequested: false,
      modality: request?.modality ?? this.#deps.modality?.() ?? 'audio',
      metadata: request?.metadata ?? null,
      input: this.#deps.takeInput?.() ?? { audioMs: 0, textChars: 0 },
    };
    this.#items.set(utteranceId, item);
    this.#deps.encoder().reset();
    const { emit } = this.#deps;
    emit({
      type: 'response.created',
      response: {
        ...this.#responseObject(item, 'in_progress'),
        ...(continues === undefined ? {} : { venus: { continues } }),
      },
    });
    const added = messageItem(item, 'in_progress', []);
    const message = this.#deps.conversation.present(added);
    emit({ type: 'response.output_item.added', response_id: item.responseId, output_index: 0, item: message });
    this.#deps.conversation.add(added);
    const part = this.#present(
      item.modality === 'text' ? { type: 'output_text', text: '' } : { type: 'output_audio', transcript: '' },
    );
    emit({ type: 'response.content_part.added', ...this.#where(item), part });
    return item;
  }

  /** The `.done` events of the response's content; its final part. */
  #finishPart(item: AssistantItem): ItemContent {
    const { emit } = this.#deps;
    const where = this.#where(item);
    const transcript = item.transcript;
    if (item.modality === 'text') {
      for (const type of this.#names('response.output_text.done', 'response.text.done'))
        emit({ type, ...where, text: transcript });
      return { type: 'output_text', text: transcript };
    }
    for (const type of this.#names('response.output_audio_transcript.done', 'response.audio_transcript.done')) {
      emit({ type, ...where, transcript });
    }
    for (const type of this.#names('response.output_audio.done', 'response.audio.done')) emit({ type, ...where });
    return { type: 'output_audio', transcript };
  }

  /** The response object with this response's modality and the request's metadata. */
  #responseObject(item: AssistantItem, status: string) {
    return { ...responseObject(item.responseId, status, item.modality), metadata: item.metadata };
  }

  /** GA clients know the parts as `output_audio`/`output_text`, beta clients as `audio`/`text`. */
  #present(part: ItemContent) {
    return presentContent(part, this.#deps.betaAliases?.() === false);
  }

  #where(item: AssistantItem) {
    return { response_id: item.responseId, item_id: item.itemId, output_index: 0, content_index: 0 };
  }

  #forgetOldest(): void {
    if (this.#items.size <= REMEMBERED_ITEMS) return;
    for (const [id, item] of this.#items) {
      if (this.#items.size <= REMEMBERED_ITEMS) break;
      if (item.done) this.#items.delete(id);
    }
  }
}

/** An OpenAI `realtime.response` with no output yet. */
export function responseObject(id: string, status: string, modality: OutputModality = 'audio') {
  return {
    id,
    object: 'realtime.response',
    status,
    status_details: null,
    output: [] as unknown[],
    output_modalities: gaModalities(modality),
    modalities: betaModalities(modality),
    usage: null,
  };
}

function messageItem(
  item: AssistantItem,
  status: ConversationItem['status'],
  content: MessageItem['content'],
): MessageItem {
  return { id: item.itemId, role: 'assistant', status, content };
}
