import { createInterface } from 'node:readline';
import { serveRelay } from '../../gpu-worker/src/relay/index.ts';
import { CpuSampler } from './cpu-sampler.ts';
import { EchoFrameHost } from './echo-frame-host.ts';

/**
 * The relay benchmark's GPU worker, in its own process as in a deployment (edges and GPU workers
 * are different machines): the real relay server (`serveRelay`) in front of an EchoFrameHost. It
 * writes `{"type":"ready","url":…}` once listening, and answers commands on stdin with one JSON line:
 *
 * - `cpu FROM TO`: `{"type":"cpu","us":…}`, its CPU time between two epoch-ms times (sampled every 50 ms)
 * - `stats`: `{"type":"stats","slowConsumerDrops":…,"sessions":…}`
 *
 * Its stdin ending (the bench left) makes it close and exit.
 */
const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const cpu = new CpuSampler();
const host = new EchoFrameHost();
const relay = await serveRelay({ host, port: 0 });
emit({ type: 'ready', url: relay.url });

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, from, to] = line.trim().split(/\s+/);
  if (command === 'cpu') emit({ type: 'cpu', us: cpu.between(Number(from), Number(to)) });
  else if (command === 'stats') {
    emit({ type: 'stats', slowConsumerDrops: relay.stats().slowConsumerDrops, sessions: host.sessions });
  }
});
lines.on('close', () => {
  cpu.stop();
  relay.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
