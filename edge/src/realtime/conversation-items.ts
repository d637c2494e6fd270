import type { Emit } from './outbound-event.ts';
import type { ProtocolError } from './protocol-error.ts';

/**
 * One part of an item's content, in GA names. Beta clients get `audio` for `output_audio` and
 * `text` for `output_text` (`presentContent`); the user's parts are named alike in both dialects.
 */
export type ItemContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_audio'; transcript: string | null }
  | { type: 'output_text'; text: string }
  | { type: 'output_audio'; transcript: string };

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** What the edge keeps of a conversation item: enough to chain, retrieve and delete it. */
export interface MessageItem {
  type?: 'message';
  id: string;
  role: 'user' | 'assistant' | 'system';
  status: ItemStatus;
  content: ItemContent[];
}

/** The assistant asking the client to run one of its functions (a client call of a delegation). */
export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  status: ItemStatus;
  callId: string;
  name: string;
  /** JSON object text. */
  arguments: string;
}

/** The client's answer to a function call. */
export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id: string;
  status: ItemStatus;
  callId: string;
  output: string;
}

export type ConversationItem = MessageItem | FunctionCallItem | FunctionCallOutputItem;

export interface ConversationItemsDeps {
  emit: Emit;
  /** Whether the client speaks GA (sent `session.type: "realtime"`): GA content names and item events only. */
  ga(): boolean;
  /** How many items are kept; older ones are forgotten (retrieve answers `wrong_session`). Default 512. */
  limit?: number;
}

/** Items kept per connection: about the last hour of a busy conversation, a few hundred KB at most. */
export const REMEMBERED_CONVERSATION_ITEMS = 512;

/**
 * The conversation as the client sees it: user and assistant items in the order they entered it.
 * Each `conversation.item.added` names the item before it (`previous_item_id`), which is how
 * clients such as `@openai/agents-realtime` order their history; `null` only for the very first.
 * The model's context is append-only, so items are only ever appended here too.
 *
 * Bounded: the last `limit` items are kept; `conversation.item.retrieve` of an older one is
 * answered with `wrong_session` like any unknown item.
 *
 * @example
 *   const items = new ConversationItems({ emit, ga: () => true });
 *   items.add({ id: 'item_1', role: 'user', status: 'completed', content: [{ type: 'input_text', text: 'hi' }] });
 *   items.done('item_1'); // conversation.item.done, previous_item_id null
 */
export class ConversationItems {
  readonly #deps: ConversationItemsDeps;
  readonly #limit: number;
  /** Ids in conversation order; with at most `limit` entries the linear scans stay cheap. */
  readonly #order: string[] = [];
  readonly #byId = new Map<string, ConversationItem>();

  constructor(deps: ConversationItemsDeps) {
    this.#deps = deps;
    this.#limit = deps.limit ?? REMEMBERED_CONVERSATION_ITEMS;
  }

  /** The last item of the conversation, the one a new item follows. */
  get lastId(): string | null {
    return this.#order.at(-1) ?? null;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The message item of this id (user or assistant); undefined for function call items. */
  get(id: string): MessageItem | undefined {
    const item = this.#byId.get(id);
    return item === undefined || item.type === 'function_call' || item.type === 'function_call_output'
      ? undefined
      : item;
  }

  /** Any item of this id, messages and function call items alike. */
  item(id: string): ConversationItem | undefined {
    return this.#byId.get(id);
  }

  /** Appends the item and announces it (`conversation.item.created` too for beta clients). */
  add(item: ConversationItem): void {
    const previous = this.lastId;
    this.#order.push(item.id);
    this.#byId.set(item.id, item);
    while (this.#order.length > this.#limit) {
      const oldest = this.#order.shift();
      if (oldest !== undefined) this.#byId.delete(oldest);
    }
    const shown = this.present(item);
    if (!this.#deps.ga())
      this.#deps.emit({ type: 'conversation.item.created', previous_item_id: previous, item: shown });
    this.#deps.emit({ type: 'conversation.item.added', previous_item_id: previous, item: shown });
  }

  /** Updates the item (status, content) and sends `conversation.item.done` with its place. */
  done(id: string, change: Partial<Pick<MessageItem, 'status' | 'content'>> = {}): void {
    const item = this.#byId.get(id);
    if (item === undefined) return;
    Object.assign(item, change);
    this.#deps.emit({
      type: 'conversation.item.done',
      previous_item_id: this.#previousOf(id),
      item: this.present(item),
    });
  }

  /** `conversation.item.retrieve`: the item as it stands now. */
  /**
   * A client may name where its item goes. The model reads the conversation in one append-only
   * context, so only the end is a place it can take: anywhere else is refused, not misordered.
   */
  placementError(previous: string | null | undefined): ProtocolError | undefined {
    const last = this.lastId;
    if (previous === undefined || previous === null || previous === last) return undefined;
    if (previous === 'root' && last === null) return undefined;
    return {
      code: 'unsupported_feature',
      message: `items are appended to the end of the conversation (after ${last ?? 'nothing'}); the model's context cannot take one after ${previous}`,
      param: 'previous_item_id',
    };
  }

  retrieve(id: string): ProtocolError | undefined {
    const item = this.#byId.get(id);
    if (item === undefined) return unknownItem(id);
    this.#deps.emit({ type: 'conversation.item.retrieved', item: this.present(item) });
    return undefined;
  }

  /**
   * `conversation.item.delete`: the item leaves the conversation the client sees (later items chain
   * past it). The model's context keeps what it already read, and a `venus.notice` says so.
   */
  delete(id: string): ProtocolError | undefined {
    const item = this.#byId.get(id);
    if (item === undefined) return unknownItem(id);
    if (item.status === 'in_progress') {
      return {
        code: 'invalid_event',
        message: `item ${id} is still being generated: cancel the response first`,
        param: 'item_id',
      };
    }
    this.#byId.delete(id);
    this.#order.splice(this.#order.indexOf(id), 1);
    this.#deps.emit({ type: 'conversation.item.deleted', item_id: id });
    // Honest about the mapping: the model's context is append-only.
    this.#deps.emit({
      type: 'venus.notice',
      code: 'item_deleted_from_view',
      message: `item ${id} left the conversation's items; the model's context keeps what it already read`,
    });
    return undefined;
  }

  /** The item as the client's dialect names it (OpenAI's `realtime.item`). */
  present(item: ConversationItem): Record<string, unknown> {
    if (item.type === 'function_call') {
      const { id, status, name, callId, arguments: args } = item;
      return { id, object: 'realtime.item', type: 'function_call', status, name, call_id: callId, arguments: args };
    }
    if (item.type === 'function_call_output') {
      const { id, status, callId, output } = item;
      return { id, object: 'realtime.item', type: 'function_call_output', status, call_id: callId, output };
    }
    return {
      id: item.id,
      object: 'realtime.item',
      type: 'message',
      role: item.role,
      status: item.status,
      content: item.content.map((part) => presentContent(part, this.#deps.ga())),
    };
  }

  #previousOf(id: string): string | null {
    const index = this.#order.indexOf(id);
    return index > 0 ? (this.#order[index - 1] ?? null) : null;
  }
}

/** A content part in the client's dialect: beta clients know assistant parts as `audio` and `text`. */
export function presentContent(part: ItemContent, ga: boolean): ItemContent | Record<string, unknown> {
  if (ga) return part;
  if (part.type === 'output_audio') return { ...part, type: 'audio' };
  if (part.type === 'output_text') return { ...part, type: 'text' };
  return part;
}

function unknownItem(id: string): ProtocolError {
  return { code: 'wrong_session', message: `no item ${id} in this conversation`, param: 'item_id' };
}
