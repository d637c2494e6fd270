import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '@venus/protocol';
import { settingsOrExit } from '@venus/protocol/node';
import { readGpuWorkerSettings } from './gpu-worker-settings.ts';

/**
 * The GPU worker pod's preStop hook (`node --import tsx embedded/worker-prestop.ts`, infra/k8s):
 * starts the worker's drain (its live sessions are handed over to other workers) by sending SIGTERM
 * to it (PID 1 of its container, or the pid given as the first argument) and returns once its relay
 * stops answering `/healthz` on VENUS_RELAY_PORT, or after VENUS_DRAIN_TIMEOUT_MS plus 10 s (the
 * worker's own bound past the deadline, 5 s to store what is left, and its close). Kubernetes holds the pod's termination for the hook,
 * so the drain runs to its end within terminationGracePeriodSeconds instead of racing the kill.
 */
const log = createLogger('worker-prestop');
const { settings } = settingsOrExit(() => readGpuWorkerSettings(), log);
const pid = Number(process.argv[2] ?? 1);
const healthz = `http://127.0.0.1:${settings.VENUS_RELAY_PORT}/healthz`;
const deadline = Date.now() + settings.VENUS_DRAIN_TIMEOUT_MS + 10_000;

process.kill(pid, 'SIGTERM');
log.info({ pid, drainTimeoutMs: settings.VENUS_DRAIN_TIMEOUT_MS }, 'drain started');
while (Date.now() < deadline) {
  const answered = await fetch(healthz, { signal: AbortSignal.timeout(2_000) }).then(
    () => true,
    () => false,
  );
  if (!answered) break;
  await sleep(500);
}
log.info({ pid }, 'drain over');
