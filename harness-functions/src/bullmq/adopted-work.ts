import type { WorkEvent } from '@venus/protocol';
import { Redis, type RedisOptions } from 'ioredis';
import { WorkEventReader } from './work-event-reader.ts';

/** Works one host may hold adopted at once (a failed-over worker's sessions' open delegations). */
export const MAX_ADOPTED_WORKS = 10_000;

export interface AdoptedWorkOptions {
  url: string;
  redisOptions?: RedisOptions;
  onEvent(event: WorkEvent): void;
  onError(error: unknown): void;
}

/**
 * Work re-bound to this host after its session failed over: the harness keeps writing the work's
 * events to the stream of the host that submitted it, so this follows that stream (one blocking
 * reader per lost host, from its start, so outcomes recorded before the adoption are seen too) and
 * hands on the adopted works' events with the new incarnation. An adopted work is forgotten once
 * its result was handed on; at most `MAX_ADOPTED_WORKS` are held (the oldest is dropped past it).
 * Duplicates of what the old host already saw are harmless: the session's work book moves states
 * forward only and takes one result per work.
 */
export class AdoptedWork {
  readonly #options: AdoptedWorkOptions;
  readonly #readers = new Map<string, WorkEventReader>();
  readonly #works = new Map<string, number>();

  constructor(options: AdoptedWorkOptions) {
    this.#options = options;
  }

  adopt(eventsKey: string, workId: string, incarnation: number): void {
    this.#works.set(workId, incarnation);
    if (this.#works.size > MAX_ADOPTED_WORKS) {
      const oldest = this.#works.keys().next().value;
      if (oldest !== undefined) this.#works.delete(oldest);
    }
    if (this.#readers.has(eventsKey)) return;
    const redis = new Redis(this.#options.url, { ...this.#options.redisOptions, maxRetriesPerRequest: null });
    redis.on('error', this.#options.onError);
    const reader = new WorkEventReader({
      redis,
      key: eventsKey,
      onEvent: (event) => this.#seen(event),
      onError: this.#options.onError,
    });
    this.#readers.set(eventsKey, reader);
    reader.start();
  }

  async close(): Promise<void> {
    const readers = [...this.#readers.values()];
    this.#readers.clear();
    this.#works.clear();
    await Promise.all(readers.map((reader) => reader.stop()));
  }

  #seen(event: WorkEvent): void {
    const incarnation = this.#works.get(event.workId);
    if (incarnation === undefined) return;
    if (event.kind === 'result') this.#works.delete(event.workId);
    // A result's own incarnation moves with it, so admission sees it as the new context's.
    if (event.kind === 'result')
      this.#options.onEvent({ ...event, incarnation, result: { ...event.result, incarnation } });
    else this.#options.onEvent({ ...event, incarnation });
  }
}
