import { BenchChild, type ChildMessage, sleep } from './support/child-lines.ts';
import type { LoadClientOptions } from './support/load-client.ts';

export interface IdleConnectionsOptions {
  connections: number;
  /** How long the connections sit idle before the edge's memory is read. */
  settleS: number;
}

export interface IdleConnectionsResult {
  connections: number;
  /** Sessions that opened and got `session.created`. */
  opened: number;
  failed: number;
  firstError: string | undefined;
  /** Sessions the worker side had open when memory was read. */
  workerSessions: number;
  connectS: number;
  rssDeltaMb: number;
  rssPerConnectionKb: number;
  heapPerConnectionKb: number;
  /** Buffers and other memory outside the JS heap. */
  externalPerConnectionKb: number;
  /** Heap still held once every connection closed, per connection that was open. */
  heapLeftPerConnectionKb: number;
}

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  sessions: number;
}

/**
 * Memory the edge holds per idle realtime connection. The edge runs alone in a fresh child process
 * (support/idle-edge.ts: `serveEdgeNode` with the in-process link to a worker that just accepts
 * `open`), the clients in another (support/load-client.ts, idle mode), both with their open-file
 * limit raised. After a warm-up of a few connections (so code loading is not counted), the edge's
 * memory after a full collection is read with none open, then with all open and idle for `settleS`,
 * then again once all have closed. Loopback only; every child is stopped at the end.
 *
 * @example
 *   const r = await runIdleConnections({ connections: 5_000, settleS: 3 });
 *   console.log(r.rssPerConnectionKb, r.heapPerConnectionKb);
 */
export async function runIdleConnections(o: IdleConnectionsOptions): Promise<IdleConnectionsResult> {
  const fdLimit = o.connections + 2_048;
  const edge = BenchChild.spawn({
    entry: 'bench/support/idle-edge.ts',
    options: { maxRunS: 300 },
    fdLimit,
    nodeArgs: ['--expose-gc'],
  });
  const memory = async (): Promise<Memory> => {
    edge.command('measure');
    return (await edge.next('memory', 30_000)) as unknown as Memory;
  };
  try {
    const { url } = (await edge.next('listening', 60_000)) as ChildMessage & { url: string };
    const idle = (connections: number): LoadClientOptions => ({ mode: 'idle', url, connections, maxRunS: 240 });

    const warm = BenchChild.spawn({ entry: 'bench/support/load-client.ts', options: idle(200), fdLimit });
    await warm.next('ready', 60_000);
    warm.command('close');
    await warm.next('closed', 30_000);
    await warm.stop();
    await sleep(500);
    const before = await memory();

    const clients = BenchChild.spawn({ entry: 'bench/support/load-client.ts', options: idle(o.connections), fdLimit });
    let ready: ChildMessage;
    let during: Memory;
    try {
      ready = await clients.next('ready', 180_000);
      await sleep(o.settleS * 1000);
      during = await memory();
      clients.command('close');
      await clients.next('closed', 60_000);
    } finally {
      await clients.stop();
    }
    await sleep(1_000);
    const after = await memory();

    const opened = Number(ready.opened);
    const per = (bytes: number) => bytes / Math.max(1, opened) / 1024;
    return {
      connections: o.connections,
      opened,
      failed: Number(ready.failed),
      firstError: typeof ready.firstError === 'string' ? ready.firstError : undefined,
      workerSessions: during.sessions,
      connectS: Number(ready.ms) / 1000,
      rssDeltaMb: (during.rss - before.rss) / 2 ** 20,
      rssPerConnectionKb: per(during.rss - before.rss),
      heapPerConnectionKb: per(during.heapUsed - before.heapUsed),
      externalPerConnectionKb: per(during.external - before.external),
      heapLeftPerConnectionKb: per(after.heapUsed - before.heapUsed),
    };
  } finally {
    await edge.stop();
  }
}
