import { Redis } from 'ioredis';

export interface Note {
  id: string;
  text: string;
  createdAtMs: number;
  /** Set for reminders: when it is due. */
  remindAtMs?: number;
}

/** Where notes live, per scope (tenant and session). Oldest first. */
export interface NotesStore {
  add(scope: string, note: Note, maxNotes: number): Promise<boolean>;
  list(scope: string): Promise<Note[]>;
  delete(scope: string, id: string): Promise<boolean>;
  clear(scope: string): Promise<number>;
  close(): Promise<void>;
}

/** Notes in process memory: gone with the process. */
export class MemoryNotesStore implements NotesStore {
  readonly #notes = new Map<string, Note[]>();

  async add(scope: string, note: Note, maxNotes: number): Promise<boolean> {
    const notes = this.#notes.get(scope) ?? [];
    if (notes.length >= maxNotes) return false;
    notes.push({ ...note });
    this.#notes.set(scope, notes);
    return true;
  }

  async list(scope: string): Promise<Note[]> {
    return (this.#notes.get(scope) ?? []).map((note) => ({ ...note }));
  }

  async delete(scope: string, id: string): Promise<boolean> {
    const notes = this.#notes.get(scope) ?? [];
    const index = notes.findIndex((note) => note.id === id);
    if (index < 0) return false;
    notes.splice(index, 1);
    return true;
  }

  async clear(scope: string): Promise<number> {
    const count = this.#notes.get(scope)?.length ?? 0;
    this.#notes.delete(scope);
    return count;
  }

  async close(): Promise<void> {}
}

/** KEYS: notes hash. ARGV: id, JSON, max. 0 when full. */
const ADD_LUA = `
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

type NotesRedis = Redis & { venusNotesAdd(key: string, id: string, json: string, max: number): Promise<number> };

/**
 * Notes on Redis: one hash per scope (`venus:notes:{scope}`), note id to JSON, so notes survive
 * restarts and are shared by every harness process.
 */
export class RedisNotesStore implements NotesStore {
  readonly #redis: NotesRedis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;

  constructor(options: { url?: string; client?: Redis; prefix?: string }) {
    const redis = options.client ?? new Redis(options.url ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 3 });
    redis.defineCommand('venusNotesAdd', { numberOfKeys: 1, lua: ADD_LUA });
    this.#redis = redis as NotesRedis;
    this.#ownsClient = options.client === undefined;
    this.#prefix = options.prefix ?? 'venus:notes:';
  }

  async add(scope: string, note: Note, maxNotes: number): Promise<boolean> {
    return Number(await this.#redis.venusNotesAdd(this.#key(scope), note.id, JSON.stringify(note), maxNotes)) === 1;
  }

  async list(scope: string): Promise<Note[]> {
    const all = await this.#redis.hvals(this.#key(scope));
    return all
      .map((json) => JSON.parse(json) as Note)
      .sort((a, b) => a.createdAtMs - b.createdAtMs || a.id.localeCompare(b.id));
  }

  async delete(scope: string, id: string): Promise<boolean> {
    return (await this.#redis.hdel(this.#key(scope), id)) === 1;
  }

  async clear(scope: string): Promise<number> {
    const count = await this.#redis.hlen(this.#key(scope));
    await this.#redis.del(this.#key(scope));
    return count;
  }

  async close(): Promise<void> {
    if (this.#ownsClient) await this.#redis.quit();
  }

  #key(scope: string): string {
    return `${this.#prefix}{${scope}}`;
  }
}
