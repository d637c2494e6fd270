/** A live session as revocation sees it: ended with a message when its key stops being usable. */
export interface KeySession {
  readonly closed: boolean;
  end(message: string): void;
}

export type KeyLiveness = (keyId: string) => Promise<{ ok: true } | { ok: false; message: string }>;

export interface LiveKeySessionsOptions {
  /** Whether a key may still be used (revoked, expired, past its rotation grace: not). */
  isLive: KeyLiveness;
  /** How often every live session's key is checked again. Default 30 s. */
  recheckMs?: number;
}

/** The documented bound: a key revoked on another edge ends its sessions here within this. */
export const KEY_RECHECK_MS = 30_000;

/**
 * The live realtime sessions of this edge by the API key that opened them (a client token counts
 * as the key that minted it), so a key that stops being usable ends its sessions: at once on the
 * edge that revoked it (`endKey`), and on every other edge sharing the key store within
 * `recheckMs` (`recheck` asks the store about each key with live sessions, which also catches
 * expiry and the end of a rotation's grace). Holds one entry per live session, removed when the
 * session ends; the timer runs only while there are sessions and never keeps the process alive.
 *
 * @example
 *   const remove = auth.sessions.add(principal.keyId, { closed: false, end: (m) => socket.close(1008, m) });
 *   // when the session ends: remove();
 */
export class LiveKeySessions {
  readonly #isLive: KeyLiveness;
  readonly #recheckMs: number;
  readonly #byKey = new Map<string, Set<KeySession>>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: LiveKeySessionsOptions) {
    this.#isLive = options.isLive;
    this.#recheckMs = options.recheckMs ?? KEY_RECHECK_MS;
  }

  get size(): number {
    let n = 0;
    for (const sessions of this.#byKey.values()) n += sessions.size;
    return n;
  }

  /** Tracks `session` under `keyId`; the returned function forgets it (call it when the session ends). */
  add(keyId: string, session: KeySession): () => void {
    const sessions = this.#byKey.get(keyId) ?? new Set<KeySession>();
    this.#byKey.set(keyId, sessions);
    sessions.add(session);
    this.#startTimer();
    return () => {
      sessions.delete(session);
      if (sessions.size === 0 && this.#byKey.get(keyId) === sessions) this.#byKey.delete(keyId);
      if (this.#byKey.size === 0) this.#stopTimer();
    };
  }

  /** Ends every live session of `keyId` on this edge; returns how many. */
  endKey(keyId: string, message: string): number {
    const sessions = this.#byKey.get(keyId);
    if (sessions === undefined) return 0;
    this.#byKey.delete(keyId);
    let ended = 0;
    for (const session of sessions) {
      if (session.closed) continue;
      session.end(message);
      ended += 1;
    }
    if (this.#byKey.size === 0) this.#stopTimer();
    return ended;
  }

  /** Asks about each key with live sessions and ends those of keys no longer usable; returns how many. */
  async recheck(): Promise<number> {
    let ended = 0;
    for (const keyId of [...this.#byKey.keys()]) {
      const live = await this.#isLive(keyId).catch(() => ({ ok: true as const }));
      // A store that cannot answer keeps sessions up: an outage is not a revocation.
      if (!live.ok) ended += this.endKey(keyId, live.message);
    }
    return ended;
  }

  stop(): void {
    this.#stopTimer();
  }

  #startTimer(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.recheck(), this.#recheckMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
