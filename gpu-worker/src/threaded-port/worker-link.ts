import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { VenusError } from '@venus/protocol';
import type { SessionThreadMessage, ThreadReply } from './thread-protocol.ts';

/**
 * Worker threads load our .ts sources through tsx. On Node 20 a worker ignores `--import` in its
 * `execArgv`, so each worker starts from a two-line bootstrap that registers tsx's loader inside
 * the worker and then imports the entry; this works under vitest and plain node alike.
 */
const TSX_API = pathToFileURL(
  path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs'),
).href;

function bootstrap(entry: URL): string {
  return `import(${JSON.stringify(TSX_API)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
}

/**
 * Starts a worker thread and resolves with its first message (its `ready` report), or rejects if
 * it fails or exits first.
 */
export function startWorker<Ready>(
  url: URL,
  workerData: unknown,
  transferList: readonly Transferable[] = [],
): Promise<{ worker: Worker; ready: Ready }> {
  const worker = new Worker(bootstrap(url), {
    eval: true,
    workerData,
    transferList: transferList as never,
  });
  return new Promise((resolve, reject) => {
    const fail = (err: unknown) => {
      worker.off('message', onMessage);
      reject(
        new VenusError('model_unavailable', `worker ${url.pathname.split('/').pop()} failed to start: ${String(err)}`, {
          cause: err,
        }),
      );
    };
    const onExit = (code: number) => fail(new Error(`exited with code ${code}`));
    const onMessage = (ready: Ready) => {
      worker.off('error', fail);
      worker.off('exit', onExit);
      resolve({ worker, ready });
    };
    worker.once('message', onMessage);
    worker.once('error', fail);
    worker.once('exit', onExit);
  });
}

/**
 * The main thread's side of one inference worker: request/response calls matched by id, one-way
 * sends for inputs, and failure of every pending call if the worker dies. `Out` is the worker's
 * message protocol; replies are `{ t: 'reply', id, ok, … }` whatever the worker.
 *
 * @example
 *   const link = new WorkerLink(worker);
 *   const step = await link.call({ t: 'call', id: link.nextId(), handle, call: { op: 'step', request } });
 */
export class WorkerLink<Out extends { t: string } = SessionThreadMessage> {
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: unknown) => void }>();
  private ids = 0;
  private failure: VenusError | null = null;
  sessions = 0;

  constructor(readonly worker: Worker) {
    worker.on('message', (message: ThreadReply | { t: string }) => {
      if (!isReply(message)) return;
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.ok) pending.resolve(message.value);
      else pending.reject(new VenusError(message.code, message.message));
    });
    worker.on('error', (err) =>
      this.fail(new VenusError('model_unavailable', `session thread failed: ${err.message}`, { cause: err })),
    );
    worker.on('exit', (code) =>
      this.fail(new VenusError('model_unavailable', `session thread exited with code ${code}`)),
    );
  }

  nextId(): number {
    this.ids += 1;
    return this.ids;
  }

  get alive(): boolean {
    return this.failure === null;
  }

  send(message: Out, transfer: readonly ArrayBuffer[] = []): void {
    if (this.failure) throw this.failure;
    this.worker.postMessage(message, transfer as ArrayBuffer[]);
  }

  call<T>(message: Extract<Out, { id: number }>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(message.id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage(message);
    });
  }

  fail(error: VenusError): void {
    if (this.failure) return;
    this.failure = error;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}

function isReply(message: { t: string }): message is ThreadReply {
  return message.t === 'reply';
}

/** How long a thread gets to release its native resources before it is terminated anyway. */
const SHUTDOWN_GRACE_MS = 2000;

/**
 * Ends session threads: each live one is asked to release its native resources first (terminating
 * a thread that still holds an onnxruntime session aborts the whole process at exit), for at most
 * two seconds; then every pending call fails with `reason` and the threads are terminated.
 */
export async function closeThreads<Out extends { t: string }>(
  links: readonly WorkerLink<Out>[],
  reason: string,
): Promise<void> {
  await Promise.all(
    links
      .filter((l) => l.alive)
      .map((l) =>
        Promise.race([
          l.call({ t: 'shutdown', id: l.nextId() } as unknown as Extract<Out, { id: number }>).catch(() => undefined),
          new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref()),
        ]),
      ),
  );
  for (const l of links) l.fail(new VenusError('model_unavailable', reason));
  await Promise.all(links.map((l) => l.worker.terminate()));
}
