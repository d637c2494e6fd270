import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Output kept per stream: enough for a banner and the last errors, bounded against a runaway log. */
const MAX_CAPTURE = 1024 * 1024;

export interface VenusProcess {
  /** The ready line's match. */
  ready: RegExpExecArray;
  pid: number;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stderr(): string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * One of the runtime's processes (`edge/src/edge-main.ts`, `embedded/gpu-worker-main.ts`,
 * `harness-functions/src/harness-main.ts`) as a real child, resolved once its stdout matches `ready`.
 */
export async function startVenusProcess(
  entry: string,
  env: Record<string, string>,
  ready: RegExp,
  readyTimeoutMs = 90_000,
): Promise<VenusProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', VENUS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    if (out.length < MAX_CAPTURE) out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    if (err.length < MAX_CAPTURE) err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} did not get ready; stderr: ${err.slice(-2000)}`));
    }, readyTimeoutMs);
    const look = (): void => {
      const found = ready.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited (${code}) before it was ready; stderr: ${err.slice(-2000)}`));
    });
  });
  return {
    ready: match,
    pid: child.pid!,
    exited,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
