import type { WorkEvent } from '@venus/protocol';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { WorkEventSchema } from './delegation-job.ts';

export interface WorkEventReaderOptions {
  /** A connection of its own: XREAD BLOCK holds it. The reader disconnects it on stop. */
  redis: Redis;
  key: string;
  /** Stream id to read after; '0' replays the whole stream (a fresh host's stream is empty). */
  afterId?: string;
  blockMs?: number;
  onEvent(event: WorkEvent, entryId: string): void;
  /** Malformed entries and connection trouble; the reader carries on. */
  onError(error: unknown): void;
}

type StreamReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

const PAGE = 512;
const RETRY_MS = [50, 100, 250, 500, 1000] as const;

/**
 * Tails one events stream with XREAD BLOCK and hands each entry, in stream order, to `onEvent`
 * exactly once: the cursor only moves past an entry after it was handed over, and a lost
 * connection resumes from the cursor. Stops on `stop()`.
 *
 * @example
 *   const reader = new WorkEventReader({ redis: new Redis(url), key: 'venus:work-events:h1',
 *     onEvent: (event) => console.log(event), onError: console.error });
 *   reader.start();
 *   await reader.stop();
 */
export class WorkEventReader {
  readonly #options: WorkEventReaderOptions;
  #cursor: string;
  #stopped = false;
  #loop: Promise<void> | null = null;

  constructor(options: WorkEventReaderOptions) {
    this.#options = options;
    this.#cursor = options.afterId ?? '0';
  }

  /** Id of the last entry handed over. */
  get cursor(): string {
    return this.#cursor;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#options.redis.disconnect();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { redis, key, onEvent, onError } = this.#options;
    const blockMs = this.#options.blockMs ?? 5_000;
    let failures = 0;
    while (!this.#stopped) {
      let reply: StreamReply;
      try {
        reply = (await redis.xread('COUNT', PAGE, 'BLOCK', blockMs, 'STREAMS', key, this.#cursor)) as StreamReply;
        failures = 0;
      } catch (error) {
        if (this.#stopped) return;
        onError(error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]));
        continue;
      }
      for (const [id, fields] of reply?.[0]?.[1] ?? []) {
        if (this.#stopped) return;
        this.#cursor = id;
        const parsed = WorkEventSchema.safeParse(parseJson(fieldValue(fields, 'e')));
        if (!parsed.success) {
          onError(new Error(`malformed work event ${id} in ${key}: ${z.prettifyError(parsed.error)}`));
          continue;
        }
        onEvent(parsed.data, id);
      }
    }
  }
}

function fieldValue(fields: string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
