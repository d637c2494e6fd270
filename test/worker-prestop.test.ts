import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { startVenusProcess } from './support/venus-process.ts';

/**
 * The GPU worker pod's preStop hook (infra/k8s/gpu-worker.yaml) against a real worker process:
 * it starts the worker's drain (SIGTERM) and returns once the worker's relay has closed.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

it('the preStop hook drains a real worker and returns after it has exited', async () => {
  const worker = await startVenusProcess(
    'embedded/gpu-worker-main.ts',
    { VENUS_RELAY_PORT: '0', VENUS_WORKER_ID: 'prestop-w1', VENUS_DRAIN_TIMEOUT_MS: '20000' },
    /relay\s+ws:\/\/127\.0\.0\.1:(\d+)\/relay/,
  );
  const hook = spawn(process.execPath, ['--import', 'tsx', 'embedded/worker-prestop.ts', String(worker.pid)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      VENUS_RELAY_PORT: worker.ready[1]!,
      VENUS_DRAIN_TIMEOUT_MS: '20000',
      VENUS_LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  const hookExit = await new Promise<number | null>((resolve) => hook.once('exit', (code) => resolve(code)));
  expect(hookExit).toBe(0);
  // It returned because the relay stopped answering, the drain's end: the worker exits cleanly.
  expect(await worker.exited).toBe(0);
}, 120_000);
