import { createInterface } from 'node:readline';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { serveEdgeNode } from '@venus/edge';
import { InProcessLink } from '../../embedded/in-process-link.ts';
import { EchoFrameHost } from './echo-frame-host.ts';

/**
 * The edge of the idle-connections benchmark, alone in a fresh process (run with `--expose-gc`) so
 * its memory is measured without anyone else's: `serveEdgeNode` on loopback with the in-process
 * link to a worker that accepts `open` and sends nothing (no audio ever comes). It prints
 * `{"type":"listening","url"}`, answers each `measure` line on stdin with its memory after a full
 * collection, and leaves when stdin ends.
 */
const { maxRunS } = JSON.parse(process.argv[2] ?? '{}') as { maxRunS?: number };
setTimeout(() => process.exit(3), (maxRunS ?? 300) * 1000).unref();

const host = new EchoFrameHost();
const link = new InProcessLink(host);
const server = await serveEdgeNode({ link, port: 0 });
const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
emit({ type: 'listening', url: `${server.url.replace(/^http/, 'ws')}/v1/realtime` });

const collect = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await nextTurn();
  }
};

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() !== 'measure') return;
  void collect().then(() => {
    const memory = process.memoryUsage();
    emit({ type: 'memory', ...memory, sessions: host.sessions, opened: host.opened, gc: globalThis.gc !== undefined });
  });
});
lines.on('close', () => {
  const forced = setTimeout(() => process.exit(0), 5_000);
  forced.unref();
  void server
    .close()
    .then(() => link.close())
    .finally(() => process.exit(0));
});
