import { VenusError } from '@venus/protocol';
import type { PlaceOptions, WorkerEndpoint, WorkerPlacement } from './worker-placement.ts';

/**
 * Placement over a fixed list of workers, without Redis: each session goes to the worker this edge
 * has given the fewest live sessions (earlier in the list on a tie). It knows nothing of capacity or
 * other edges; the fleet registry does.
 *
 * @example
 *   const placement = StaticPlacement.fromList('ws://gpu-1:8081/relay,ws://gpu-2:8081/relay');
 */
export class StaticPlacement implements WorkerPlacement {
  readonly #workers: { endpoint: WorkerEndpoint; sessions: number }[];
  readonly #placed = new Map<string, { endpoint: WorkerEndpoint; sessions: number }>();

  constructor(endpoints: readonly WorkerEndpoint[]) {
    if (endpoints.length === 0)
      throw new VenusError('invalid_arguments', 'a static worker list needs at least one url');
    this.#workers = endpoints.map((endpoint) => ({ endpoint, sessions: 0 }));
  }

  /** Comma- or space-separated relay urls, as in `VENUS_WORKERS`; each url is its own id. */
  static fromList(list: string): StaticPlacement {
    const urls = list.split(/[\s,]+/).filter(Boolean);
    for (const url of urls) {
      if (!/^wss?:\/\//.test(url))
        throw new VenusError('invalid_arguments', `VENUS_WORKERS: ${url} is not a ws(s):// url`);
    }
    return new StaticPlacement(urls.map((url) => ({ id: url, url })));
  }

  async place(session: string, options: PlaceOptions = {}): Promise<WorkerEndpoint> {
    const exclude = new Set(options.exclude ?? []);
    let best: { endpoint: WorkerEndpoint; sessions: number } | undefined;
    for (const worker of this.#workers) {
      if (exclude.has(worker.endpoint.id)) continue;
      if (best === undefined || worker.sessions < best.sessions) best = worker;
    }
    if (best === undefined) throw new VenusError('model_unavailable', `no other GPU worker for session ${session}`);
    best.sessions += 1;
    this.#placed.set(session, best);
    return best.endpoint;
  }

  release(session: string): void {
    const worker = this.#placed.get(session);
    if (worker === undefined) return;
    this.#placed.delete(session);
    worker.sessions -= 1;
  }

  async close(): Promise<void> {}
}
