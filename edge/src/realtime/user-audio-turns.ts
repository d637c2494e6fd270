import type { UserTranscript } from '@venus/protocol';
import type { ConversationItems } from './conversation-items.ts';
import type { Emit } from './outbound-event.ts';

export interface UserAudioTurnsDeps {
  emit: Emit;
  conversation: ConversationItems;
}

/**
 * Items committed from speech whose transcript has not come yet. A transcript follows its turn
 * within a step or two, so a handful is the steady state; the bound caps what a model port that
 * never transcribes leaves behind (the oldest stop waiting: their items simply have no transcript).
 */
const MAX_AWAITING = 8;

/**
 * The user's spoken turns as OpenAI clients know them. When a turn of speech ends
 * (`speech_stopped` for an item whose `speech_started` went out), the audio buffer is committed
 * (`input_audio_buffer.committed` naming the item before it) and a user `message` item with an
 * `input_audio` part enters the conversation, its transcript still null. When the model port
 * hears words (a `user.transcript` on the timeline), the oldest committed item waiting gets them:
 * `conversation.item.input_audio_transcription.delta` (the whole text: the recogniser's final,
 * not its changing partials) then `.completed`. A transcript of speech that was a turn for the
 * model but had no announced item (its start and end fell in one chunk) commits its item then.
 * Speech the runtime talked through (backchannels, background speech) is no turn: its transcript
 * goes out as `venus.user.transcript` only, as every transcript does.
 *
 * @example
 *   turns.committed(speechItemId); // on speech_stopped
 *   turns.transcript(event.data);  // on user.transcript
 */
export class UserAudioTurns {
  readonly #deps: UserAudioTurnsDeps;
  readonly #awaiting: string[] = [];

  constructor(deps: UserAudioTurnsDeps) {
    this.#deps = deps;
  }

  /** The user's turn of speech ended: commit its audio as item `itemId`. */
  committed(itemId: string): void {
    const { emit, conversation } = this.#deps;
    if (conversation.has(itemId)) return;
    emit({ type: 'input_audio_buffer.committed', previous_item_id: conversation.lastId, item_id: itemId });
    conversation.add({
      id: itemId,
      role: 'user',
      status: 'completed',
      content: [{ type: 'input_audio', transcript: null }],
    });
    conversation.done(itemId);
    this.#awaiting.push(itemId);
    if (this.#awaiting.length > MAX_AWAITING) this.#awaiting.shift();
  }

  /** What the model heard; `newItemId` names the item a turn without one is committed as. */
  transcript(t: UserTranscript, newItemId: () => string): void {
    const { emit, conversation } = this.#deps;
    const awaited = t.addressed ? this.#awaiting.shift() : undefined;
    const id = t.addressed ? (awaited ?? newItemId()) : null;
    if (id !== null && awaited === undefined) {
      this.committed(id);
      this.#awaiting.pop();
    }
    emit({
      type: 'venus.user.transcript',
      item_id: id,
      transcript: t.text,
      confidence: t.confidence,
      in_grammar: t.inGrammar,
      addressed: t.addressed,
      audio_ms: t.audio.durationMs,
    });
    if (id === null) return;
    const item = conversation.get(id);
    if (item) item.content = [{ type: 'input_audio', transcript: t.text }];
    emit({ type: 'conversation.item.input_audio_transcription.delta', item_id: id, content_index: 0, delta: t.text });
    emit({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: id,
      content_index: 0,
      transcript: t.text,
    });
  }
}
