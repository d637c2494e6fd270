import { createLogger, type MediaRef, type MediaStore, type MediaTrack, pcmDurationMs } from '@venus/protocol';
import type { ChainableCommander, Redis } from 'ioredis';
import { storeConnection } from '../timeline/redis-connection.ts';
import { type MediaBounds, mediaBounds } from './media-retention.ts';
import { TrackWindow, type WindowSegment } from './track-window.ts';

export interface RedisMediaStoreOptions extends MediaBounds {
  /** Connection URL; ignored when `client` is given. */
  url?: string;
  /** A connection to share; the store never closes it. */
  client?: Redis;
  /** Key prefix, e.g. `venus:`; keys are `${prefix}media:${session}:${track}` (+ `:refs`). */
  prefix?: string;
  /**
   * A live session's keys expire this long after its last write (default 15 min): the bound for a
   * writer that died without ending its sessions.
   */
  idleTtlMs?: number;
  /** Sample bytes written but not yet acknowledged beyond which new segments are dropped (default 8 MB). */
  maxPendingBytes?: number;
}

const DEFAULT_IDLE_TTL_MS = 15 * 60_000;
const DEFAULT_MAX_PENDING_BYTES = 8 * 1024 * 1024;

interface SessionWindows {
  tracks: Map<MediaTrack, TrackWindow<WindowSegment>>;
  epoch: string;
}

/**
 * Media store on Redis, for workers that fail over: per session and track, a hash of segment id ->
 * samples (binary) and a list of the refs in order. The writer keeps the refs of its window locally,
 * so it knows what leaves the window without asking Redis: each put is HSET + RPUSH, then HDEL of the
 * evicted segments + LTRIM of the list to the window, and a PEXPIRE to the idle bound; endSession
 * sets PEXPIREAT to `retentionMs` from now. Memory bound in Redis: live sessions × windowMs ×
 * 80 kB/s (both tracks), plus ended sessions within the retention, plus abandoned ones within the idle TTL.
 *
 * `put` never waits: commands of one tick go out as one pipeline on one connection, in call order,
 * after everything queued before (a read issued after a put sees it). When Redis falls behind by more
 * than `maxPendingBytes` of samples, new segments are dropped (their refs read as null) rather
 * than letting the client queue grow this process's memory.
 *
 * @example
 *   const media = new RedisMediaStore({ url: process.env.REDIS_URL, prefix: 'venus:' });
 *   const ref = media.put('s1', 'assistant', pcm24k, 24_000);
 *   await media.read('s1', ref);
 */
export class RedisMediaStore implements MediaStore {
  readonly #redis: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #bounds: Required<MediaBounds>;
  readonly #idleTtlMs: number;
  readonly #maxPendingBytes: number;
  readonly #sessions = new Map<string, SessionWindows>();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #log = createLogger('gpu-worker.media');
  #pipeline: ChainableCommander | undefined;
  #pipelineBytes = 0;
  #pendingBytes = 0;
  #dropped = 0;

  constructor(options: RedisMediaStoreOptions = {}) {
    this.#bounds = mediaBounds(options);
    this.#ownsClient = options.client === undefined;
    this.#redis = options.client ?? storeConnection('media-store', options.url);
    this.#prefix = options.prefix ?? '';
    this.#idleTtlMs = options.idleTtlMs ?? DEFAULT_IDLE_TTL_MS;
    this.#maxPendingBytes = options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
  }

  put(session: string, track: MediaTrack, pcm: Int16Array, sampleRateHz: 16_000 | 24_000): MediaRef {
    const window = this.#window(session, track);
    const { ref, evicted } = window.push(pcmDurationMs(pcm.length, sampleRateHz), sampleRateHz, (r, n) => ({
      ref: r,
      n,
    }));
    const samples = this.#key(session, track);
    const refs = `${samples}:refs`;
    const p = this.#queue();
    if (this.#pendingBytes + this.#pipelineBytes + pcm.byteLength <= this.#maxPendingBytes) {
      // Copied: ioredis serialises later, and the caller may reuse its array.
      p.hset(samples, ref.segmentId, Buffer.from(pcm.slice().buffer));
      this.#pipelineBytes += pcm.byteLength;
    } else if (this.#dropped++ % 1000 === 0) {
      this.#log.warn({ session, dropped: this.#dropped }, 'redis is behind: media segments dropped');
    }
    p.rpush(refs, JSON.stringify(ref));
    if (evicted.length > 0) {
      p.hdel(samples, ...evicted.map((segment) => segment.ref.segmentId));
      p.ltrim(refs, -window.size, -1);
    }
    p.pexpire(samples, this.#idleTtlMs);
    p.pexpire(refs, this.#idleTtlMs);
    return ref;
  }

  async read(session: string, ref: MediaRef): Promise<Int16Array | null> {
    this.#flush();
    const bytes = await this.#redis.hgetBuffer(this.#key(session, ref.track), ref.segmentId);
    return bytes === null ? null : toPcm(bytes);
  }

  async recent(session: string, track: MediaTrack, windowMs: number): Promise<{ ref: MediaRef; pcm: Int16Array }[]> {
    this.#flush();
    const samples = this.#key(session, track);
    const listed = await this.#redis.lrange(`${samples}:refs`, 0, -1);
    const newest: MediaRef[] = [];
    let coveredMs = 0;
    for (let i = listed.length - 1; i >= 0 && coveredMs < windowMs; i--) {
      const ref = JSON.parse(listed[i]!) as MediaRef;
      newest.push(ref);
      coveredMs += ref.durationMs;
    }
    newest.reverse();
    if (newest.length === 0) return [];
    const found = await this.#redis.hmgetBuffer(samples, ...newest.map((ref) => ref.segmentId));
    const out: { ref: MediaRef; pcm: Int16Array }[] = [];
    newest.forEach((ref, i) => {
      const bytes = found[i];
      if (bytes !== null && bytes !== undefined) out.push({ ref, pcm: toPcm(bytes) });
    });
    return out;
  }

  endSession(session: string): void {
    const windows = this.#sessions.get(session);
    if (windows === undefined) return;
    this.#sessions.delete(session);
    const p = this.#queue();
    // The store's clock, not Redis's: an injected clock can end a session "in the past" in tests.
    const expiresAt = this.#bounds.now() + this.#bounds.retentionMs;
    for (const track of windows.tracks.keys()) {
      const samples = this.#key(session, track);
      if (this.#bounds.retentionMs === 0) p.del(samples, `${samples}:refs`);
      else {
        p.pexpireat(samples, expiresAt);
        p.pexpireat(`${samples}:refs`, expiresAt);
      }
    }
  }

  /** Sends what is queued and waits until Redis has acknowledged every write. */
  async flush(): Promise<void> {
    this.#flush();
    await Promise.all([...this.#inFlight]);
  }

  async close(): Promise<void> {
    await this.flush();
    this.#sessions.clear();
    if (this.#ownsClient) await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  /** Segments whose samples were dropped because Redis was behind. */
  get droppedSegments(): number {
    return this.#dropped;
  }

  #window(session: string, track: MediaTrack): TrackWindow<WindowSegment> {
    let windows = this.#sessions.get(session);
    if (windows === undefined) {
      // Random per life of the session in this writer: after a handover the new writer's segment
      // ids never collide with the old writer's still in Redis.
      windows = { tracks: new Map(), epoch: Math.random().toString(36).slice(2, 10) };
      this.#sessions.set(session, windows);
    }
    let window = windows.tracks.get(track);
    if (window === undefined) {
      window = new TrackWindow(track, windows.epoch, this.#bounds.windowMs);
      windows.tracks.set(track, window);
    }
    return window;
  }

  #queue(): ChainableCommander {
    if (this.#pipeline === undefined) {
      this.#pipeline = this.#redis.pipeline();
      setImmediate(() => this.#flush());
    }
    return this.#pipeline;
  }

  #flush(): void {
    const p = this.#pipeline;
    if (p === undefined) return;
    const bytes = this.#pipelineBytes;
    this.#pipeline = undefined;
    this.#pipelineBytes = 0;
    this.#pendingBytes += bytes;
    const sent = p
      .exec()
      .then((results) => {
        const failed = results?.find(([error]) => error !== null)?.[0];
        if (failed) this.#log.warn({ err: failed }, 'media write failed');
      })
      .catch((err: unknown) => this.#log.warn({ err }, 'media write failed'))
      .finally(() => {
        this.#pendingBytes -= bytes;
        this.#inFlight.delete(sent);
      });
    this.#inFlight.add(sent);
  }

  #key(session: string, track: MediaTrack): string {
    return `${this.#prefix}media:${session}:${track}`;
  }
}

/** Samples from Redis bytes; copied, since ioredis may hand out a view into a pooled buffer. */
function toPcm(bytes: Buffer): Int16Array {
  const copy = new Uint8Array(bytes.byteLength - (bytes.byteLength % 2));
  copy.set(bytes.subarray(0, copy.byteLength));
  return new Int16Array(copy.buffer);
}
