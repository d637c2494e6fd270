import type { ProtocolError } from './protocol-error.ts';

/** What the connection knows of an item a client names: the audio sent for it if it is an assistant item. */
export interface NamedItem {
  sessionId: string;
  /** Audio sent for the assistant item, or undefined when no assistant item has this id. */
  sentMs: number | undefined;
  /** The id is one of the client's own (user) items. */
  userItem: boolean;
}

/** An event naming an assistant item (a playback ack, a truncate): refused unless it is one. */
export function assistantItemError(itemId: string, named: NamedItem): ProtocolError | undefined {
  if (named.sentMs !== undefined) return undefined;
  if (named.userItem) {
    return {
      code: 'invalid_event',
      message: `item ${itemId} is a user item; only assistant audio items apply`,
      param: 'item_id',
    };
  }
  return {
    code: 'wrong_session',
    message: `no assistant item ${itemId} in session ${named.sessionId}`,
    param: 'item_id',
  };
}

/** A `conversation.item.truncate` the connection can carry out, or why not. */
export function truncateError(
  event: { item_id: string; content_index: number; audio_end_ms: number },
  named: NamedItem,
): ProtocolError | undefined {
  const error = assistantItemError(event.item_id, named);
  if (error !== undefined) return error;
  if (event.content_index !== 0) {
    return {
      code: 'invalid_event',
      message: 'assistant items have one content part (index 0)',
      param: 'content_index',
    };
  }
  const sentMs = named.sentMs ?? 0;
  // One ms of slack: clients round the position they cut at.
  if (event.audio_end_ms > Math.ceil(sentMs) + 1) {
    const message = `audio_end_ms ${event.audio_end_ms} is past the ${Math.round(sentMs)} ms of audio sent`;
    return { code: 'invalid_event', message, param: 'audio_end_ms' };
  }
  return undefined;
}

/** User item ids a connection remembers (to refuse a duplicate id, or an ack naming a user item). */
export const REMEMBERED_USER_ITEMS = 512;

/** The most recent `limit` ids, oldest forgotten first. */
export class RecentIds {
  readonly #ids = new Set<string>();

  constructor(private readonly limit: number) {}

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size <= this.limit) return;
    const oldest = this.#ids.values().next().value;
    if (oldest !== undefined) this.#ids.delete(oldest);
  }
}
