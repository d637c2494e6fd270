import type { Worker } from 'node:worker_threads';
import {
  type RecogniserCapabilities,
  type RecogniserEvent,
  type RecogniserPort,
  type RecogniserStream,
  type RecogniserStreamOptions,
  VenusError,
} from '@venus/protocol';
import { startWorker } from '../../threaded-port/worker-link.ts';
import type { MainToRecogniser, RecogniserToMain } from './recogniser-protocol.ts';

export interface PocketSphinxRecogniserOptions {
  /** Streams at once; each holds one decoder (its own copy of the acoustic model, ~10 MB). Default 16. */
  maxStreams?: number;
  /** Audio a stream may have waiting for the decoder before push() refuses more. Default 5000 ms. */
  maxBacklogMs?: number;
}

/**
 * PocketSphinx (CMU, BSD-2) as WebAssembly in its own worker thread, behind the recogniser port:
 * never on the event loop that serves sockets. One decoder per stream, decoding as audio arrives.
 *
 * @example
 *   const recogniser = await PocketSphinxRecogniser.start();
 *   const stream = await recogniser.open({ grammar: DEMO_GRAMMAR });
 */
export class PocketSphinxRecogniser implements RecogniserPort {
  readonly capabilities: RecogniserCapabilities;
  private readonly streams = new Map<number, PocketSphinxStream>();
  private readonly opening = new Map<
    number,
    { resolve: (unknown: readonly string[]) => void; reject: (e: Error) => void }
  >();
  private nextId = 1;
  private dead: Error | undefined;
  private readonly cpuWaiters = new Map<number, (ms: number) => void>();

  private constructor(
    private readonly worker: Worker,
    private readonly options: Required<PocketSphinxRecogniserOptions>,
  ) {
    this.capabilities = {
      sampleRate: 16000,
      streamingPartials: true,
      rejectsOutOfGrammar: true,
      maxStreams: options.maxStreams,
    };
    worker.on('message', (m: RecogniserToMain) => this.onMessage(m));
    const fail = (err: Error) => {
      this.dead = err;
      for (const o of this.opening.values()) o.reject(err);
      this.opening.clear();
      for (const s of this.streams.values()) s.finish();
      this.streams.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new VenusError('model_unavailable', `recogniser thread exited (${code})`)));
  }

  static async start(options: PocketSphinxRecogniserOptions = {}): Promise<PocketSphinxRecogniser> {
    const { worker } = await startWorker<RecogniserToMain>(new URL('./recogniser-worker.ts', import.meta.url), {});
    return new PocketSphinxRecogniser(worker, {
      maxStreams: options.maxStreams ?? 16,
      maxBacklogMs: options.maxBacklogMs ?? 5000,
    });
  }

  /** Milliseconds the recogniser thread has spent busy (its event loop's active time): the bench's CPU figure. */
  busyMs(): number {
    return this.worker.performance.eventLoopUtilization().active;
  }

  /**
   * CPU time the recogniser thread has used (Linux per-thread accounting, 10 ms resolution; NaN
   * elsewhere): the bench's cost figure, which a loaded machine does not inflate as it does busy time.
   */
  cpuMs(): Promise<number> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.cpuWaiters.set(id, resolve);
      this.send({ t: 'cpu', id });
    });
  }

  /** The worker thread's id, for checks that decoding is off the main thread. */
  get threadId(): number {
    return this.worker.threadId;
  }

  async open(options: RecogniserStreamOptions): Promise<RecogniserStream> {
    if (this.dead) throw this.dead;
    if (this.streams.size + this.opening.size >= this.options.maxStreams) {
      throw new VenusError('rate_limited', `recogniser holds ${this.options.maxStreams} streams already`);
    }
    const id = this.nextId++;
    const unknownWords = await new Promise<readonly string[]>((resolve, reject) => {
      this.opening.set(id, { resolve, reject });
      this.send({ t: 'open', stream: id, grammar: options.grammar });
    });
    const stream = new PocketSphinxStream(id, unknownWords, this.options.maxBacklogMs * 16, (m) => this.send(m));
    this.streams.set(id, stream);
    return stream;
  }

  async close(): Promise<void> {
    for (const s of this.streams.values()) s.finish();
    this.streams.clear();
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }

  private send(message: MainToRecogniser): void {
    if (this.dead) throw new VenusError('model_unavailable', 'recogniser thread is gone', { cause: this.dead });
    // Transfer a copy: the caller keeps its buffer, the worker owns what it decodes.
    if (message.t === 'audio') this.worker.postMessage(message, [message.pcm.buffer as ArrayBuffer]);
    else this.worker.postMessage(message);
  }

  private onMessage(m: RecogniserToMain): void {
    if (m.t === 'ready') return;
    if (m.t === 'cpu') {
      this.cpuWaiters.get(m.id)?.(m.ms);
      this.cpuWaiters.delete(m.id);
      return;
    }
    if (m.t === 'opened') {
      this.opening.get(m.stream)?.resolve(m.unknownWords);
      this.opening.delete(m.stream);
      return;
    }
    if (m.t === 'error' && this.opening.has(m.stream)) {
      this.opening
        .get(m.stream)!
        .reject(new VenusError('invalid_settings', `recogniser refused the grammar: ${m.message}`));
      this.opening.delete(m.stream);
      return;
    }
    this.streams.get(m.stream)?.onMessage(m);
    if (m.t === 'closed') this.streams.delete(m.stream);
  }
}

class PocketSphinxStream implements RecogniserStream {
  readonly events: AsyncIterable<RecogniserEvent>;
  private readonly queue: RecogniserEvent[] = [];
  private wake: (() => void) | undefined;
  private done = false;
  private backlog = 0;
  private pendingAudio = false;
  private closed: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(
    private readonly id: number,
    readonly unknownWords: readonly string[],
    private readonly maxBacklogSamples: number,
    private readonly send: (m: MainToRecogniser) => void,
  ) {
    const self = this;
    this.events = {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const next = self.queue.shift();
          if (next) yield next;
          else if (self.done) return;
          else await new Promise<void>((r) => (self.wake = r));
        }
      },
    };
  }

  push(pcm: Int16Array): void {
    if (this.done || this.closed) throw new VenusError('session_closed', 'recogniser stream is closed');
    if (pcm.length === 0) return;
    // Bounded memory: a decoder that falls this far behind is overloaded, not a queue to grow.
    if (this.backlog + pcm.length > this.maxBacklogSamples) {
      throw new VenusError('rate_limited', `recogniser is ${Math.round(this.backlog / 16)} ms behind`);
    }
    this.backlog += pcm.length;
    this.pendingAudio = true;
    this.send({ t: 'audio', stream: this.id, pcm: pcm.slice() });
  }

  endUtterance(): void {
    if (this.done || this.closed || !this.pendingAudio) return;
    this.pendingAudio = false;
    this.send({ t: 'end', stream: this.id });
  }

  close(): Promise<void> {
    if (this.done) return Promise.resolve();
    if (!this.closed) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.closed = { promise, resolve };
      this.send({ t: 'close', stream: this.id });
    }
    return this.closed.promise;
  }

  onMessage(m: RecogniserToMain): void {
    if (m.t === 'consumed') this.backlog -= m.samples;
    else if (m.t === 'partial' || m.t === 'final') this.emit(m.event);
    else if (m.t === 'closed' || m.t === 'error') this.finish();
  }

  finish(): void {
    this.done = true;
    this.closed?.resolve();
    this.wake?.();
    this.wake = undefined;
  }

  private emit(event: RecogniserEvent): void {
    this.queue.push(event);
    this.wake?.();
    this.wake = undefined;
  }
}
