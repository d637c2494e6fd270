import { REDIS_TIMELINE, type TimelineEvent, TimelineEventSchema, type TimelineReadOptions } from '@venus/protocol';
import { Redis } from 'ioredis';
import type { TimelineReader } from './evidence.ts';

export interface RedisTimelineReaderOptions {
  /** Connection URL; ignored when `client` is given. */
  url?: string;
  /** A connection to share; the reader never closes it. */
  client?: Redis;
  /** The timeline key prefix the GPU workers write under (their VENUS_REDIS_PREFIX). */
  prefix: string;
  /** Told about each stored event this reader skips because it cannot parse it. */
  onSkipped?(session: string, entryId: string): void;
}

/**
 * Reads session timelines that GPU workers write to Redis Streams (REDIS_TIMELINE layout), for a
 * harness process that runs in its own process and never imports the worker. Read-only. Each
 * event is checked against TimelineEventSchema here, at this process's boundary; one it cannot
 * parse (a newer worker's event type, say) is skipped, since the evidence is context, not a record.
 *
 * @example
 *   const timeline = new RedisTimelineReader({ url: process.env.REDIS_URL, prefix: 'venus:' });
 *   const consumer = new BullmqDelegationConsumer({ url, registry, timeline });
 */
export class RedisTimelineReader implements TimelineReader {
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #onSkipped: (session: string, entryId: string) => void;

  constructor(options: RedisTimelineReaderOptions) {
    this.#ownsClient = options.client === undefined;
    this.#redis =
      options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', { connectionName: 'timeline-reader' });
    this.#prefix = options.prefix;
    this.#onSkipped = options.onSkipped ?? (() => {});
  }

  async read(session: string, options: TimelineReadOptions = {}): Promise<TimelineEvent[]> {
    const { entryId, field } = REDIS_TIMELINE;
    const from = entryId(Math.max(1, options.fromSeq ?? 1));
    const to = options.toSeq === undefined ? '+' : entryId(options.toSeq);
    if ((options.toSeq !== undefined && options.toSeq < 1) || options.limit === 0) return [];
    const key = REDIS_TIMELINE.key(this.#prefix, session);
    const entries: [string, string[]][] =
      options.limit === undefined
        ? await this.#redis.xrange(key, from, to)
        : await this.#redis.xrange(key, from, to, 'COUNT', Math.max(0, options.limit));
    const events: TimelineEvent[] = [];
    for (const [id, fields] of entries) {
      const at = fields.indexOf(field);
      const parsed = at >= 0 && at % 2 === 0 ? TimelineEventSchema.safeParse(parseJson(fields[at + 1])) : null;
      if (parsed?.success) events.push(parsed.data);
      else this.#onSkipped(session, id);
    }
    return events;
  }

  async close(): Promise<void> {
    if (this.#ownsClient) await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}

function parseJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined; // fails the schema check, so the entry is reported as skipped
  }
}
