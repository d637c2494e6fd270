import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * `npm start` as a real child process (`node --import tsx embedded/start.ts`) on a free port, with
 * its stdout and stderr kept for the test to read, and its resident memory read from /proc.
 */
export interface RuntimeProcess {
  url: string;
  pid: number;
  /** Everything it wrote so far (each stream kept up to MAX_CAPTURE bytes). */
  stdout(): string;
  stderr(): string;
  alive(): boolean;
  /** Resident set size in MiB (VmRSS), the whole process with its sandbox threads. */
  rssMb(): number;
  /** SIGTERM, then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A test's runtime writes far less; the cap only keeps a runaway log from taking the test down. */
const MAX_CAPTURE = 64 * 2 ** 20;

export async function startRuntimeProcess(
  env: Record<string, string>,
  options: { readyTimeoutMs?: number } = {},
): Promise<RuntimeProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'embedded/start.ts'], {
    // A free port, and no second (self-signed wss) listener on the fixed VENUS_TLS_PORT, so that
    // runtimes of tests running side by side do not collide.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      VENUS_PORT: '0',
      VENUS_TLS_SELF_SIGNED: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let exited = false;
  let exitCode: number | null = null;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    if (out.length < MAX_CAPTURE) out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    if (err.length < MAX_CAPTURE) err += chunk;
  });
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exited = true;
      exitCode = code;
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`npm start did not print its banner in time; stderr: ${err.slice(-2000)}`));
    }, options.readyTimeoutMs ?? 60_000);
    const look = () => {
      const match = /console\s+(http:\/\/[^/\s]+)\//.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout?.on('data', look);
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before it was ready; stderr: ${err.slice(-2000)}`));
    });
  });
  return {
    url,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    alive: () => !exited,
    rssMb: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN);
      return kb / 1024;
    },
    stop: async () => {
      if (exited) return exitCode;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        return await exit;
      } finally {
        clearTimeout(killer);
      }
    },
  };
}
