import type { ClientEvent, ContextRole, EdgeToWorkerFrame } from '@venus/protocol';
import { createdMessage, MAX_MESSAGE_TEXT } from './client-input.ts';
import type { ConversationItems, FunctionCallItem } from './conversation-items.ts';
import type { FunctionCalls } from './function-calls.ts';
import { randomId } from './ids.ts';
import type { RecentIds } from './item-checks.ts';
import type { Emit } from './outbound-event.ts';
import type { ProtocolError } from './protocol-error.ts';

type CreateEvent = Extract<ClientEvent, { type: 'conversation.item.create' }>;
type InputFrame = Extract<EdgeToWorkerFrame, { kind: 'text' | 'history' }>;

export interface CreatedItemsDeps {
  sessionId: string;
  emit: Emit;
  conversation: ConversationItems;
  functionCalls: FunctionCalls;
  /** The client's own user item ids (a duplicate id is refused). */
  userItems: RecentIds;
  /** Whether an assistant item of the session already has this id. */
  isAssistantItem(id: string): boolean;
  send(frame: InputFrame): void;
}

/**
 * Restored function calls waiting for their output: a restore sends a call and its output one after
 * the other, so a few dozen is plenty; past it the oldest is forgotten (its output is then refused
 * like one for an unknown call).
 */
export const REMEMBERED_RESTORED_CALLS = 64;

/**
 * `conversation.item.create`: a client's new turn or a piece of the conversation it restores.
 *
 * - A user message without a `status` is a new turn: the model hears it (`text` frame) and answers.
 * - History joins the model's context without being answered (`history` frame, then the
 *   `conversation.restored` timeline event): assistant messages (text, or audio with a transcript),
 *   system messages (they join the instructions), user messages the client gives a `status` (a
 *   record of a turn that already happened, as `@openai/agents-realtime`'s `updateHistory` sends
 *   them), and a `function_call` completed by its `function_call_output` (one `backend` entry).
 * - A `function_call_output` for a call the session itself made is that work's result.
 *
 * Items only go at the end: the model's context is append-only, so `previous_item_id` must name
 * the last item (or `root` before any item); anything else is refused with `unsupported_feature`.
 * Every accepted item is echoed in its place (`conversation.item.added/done`; beta clients also
 * `created`).
 *
 * @example
 *   const items = new CreatedItems({ sessionId, emit, conversation, functionCalls, userItems, isAssistantItem, send });
 *   items.create({ type: 'conversation.item.create', item: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi' }] } });
 */
export class CreatedItems {
  readonly #deps: CreatedItemsDeps;
  readonly #restoredCalls = new Map<string, FunctionCallItem>();

  constructor(deps: CreatedItemsDeps) {
    this.#deps = deps;
  }

  create(event: CreateEvent): ProtocolError | undefined {
    const { conversation, userItems } = this.#deps;
    const itemId = event.item.id ?? randomId('item');
    if (userItems.has(itemId) || conversation.has(itemId) || this.#deps.isAssistantItem(itemId)) {
      return { code: 'invalid_event', message: `item ${itemId} already exists`, param: 'item.id' };
    }
    const placement = conversation.placementError(event.previous_item_id);
    if (placement !== undefined) return placement;
    const { item } = event;
    switch (item.type) {
      case 'function_call':
        return this.#functionCall(item, itemId);
      case 'function_call_output': {
        const call = this.#restoredCalls.get(item.call_id);
        if (call === undefined) return this.#deps.functionCalls.output(item, itemId, event.event_id);
        this.#restoredCalls.delete(item.call_id);
        return this.#functionOutput(call, item.output, itemId);
      }
      case 'message':
        return this.#message(item, itemId);
    }
  }

  #message(item: Extract<CreateEvent['item'], { type: 'message' }>, itemId: string): ProtocolError | undefined {
    const message = createdMessage(item);
    if (!message.ok) return message.error;
    const { text, content, audioLeftOut } = message.value;
    const session = this.#deps.sessionId;
    if (item.role === 'user') this.#deps.userItems.add(itemId);
    if (item.role === 'user' && item.status === undefined) this.#deps.send({ kind: 'text', session, itemId, text });
    else this.#deps.send({ kind: 'history', session, itemId, role: item.role, text });
    if (audioLeftOut) {
      this.#notice('item_audio_not_heard', `item ${itemId}: the model reads its transcript; its audio is not decoded`);
    }
    const { conversation } = this.#deps;
    conversation.add({ id: itemId, role: item.role, status: 'completed', content });
    conversation.done(itemId);
    return undefined;
  }

  #functionCall(item: Extract<CreateEvent['item'], { type: 'function_call' }>, itemId: string): undefined {
    const call: FunctionCallItem = {
      type: 'function_call',
      id: itemId,
      status: item.status ?? 'completed',
      callId: item.call_id,
      name: item.name,
      arguments: item.arguments,
    };
    this.#restoredCalls.delete(item.call_id);
    this.#restoredCalls.set(item.call_id, call);
    if (this.#restoredCalls.size > REMEMBERED_RESTORED_CALLS) {
      this.#restoredCalls.delete(this.#restoredCalls.keys().next().value ?? '');
    }
    // The model reads the call once its output completes it: a call alone tells it nothing it can use.
    this.#deps.conversation.add(call);
    this.#deps.conversation.done(itemId);
    return undefined;
  }

  #functionOutput(call: FunctionCallItem, output: string, itemId: string): undefined {
    const full = `The function ${call.name} was called with ${call.arguments} and returned: ${output}`;
    const text = full.slice(0, MAX_MESSAGE_TEXT);
    if (text.length < full.length) {
      this.#notice('item_text_shortened', `item ${itemId}: the model reads the first ${MAX_MESSAGE_TEXT} characters`);
    }
    const role: ContextRole = 'backend';
    this.#deps.send({ kind: 'history', session: this.#deps.sessionId, itemId, role, text });
    const { conversation } = this.#deps;
    conversation.add({ type: 'function_call_output', id: itemId, status: 'completed', callId: call.callId, output });
    conversation.done(itemId);
    return undefined;
  }

  #notice(code: string, message: string): void {
    this.#deps.emit({ type: 'venus.notice', code, message });
  }
}
