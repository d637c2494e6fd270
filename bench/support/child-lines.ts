import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** One JSON line a bench child wrote on stdout; `type` names it. */
export interface ChildMessage {
  type: string;
  [key: string]: unknown;
}

export interface SpawnBenchChildOptions {
  /** Module path relative to the repository root, run with `node --import tsx`. */
  entry: string;
  /** Handed to the child as its one argument (JSON). */
  options: unknown;
  /** Open-file limit for the child (capped at the hard limit): one descriptor per socket. */
  fdLimit?: number;
  /** Extra node flags, e.g. `--expose-gc`. */
  nodeArgs?: readonly string[];
}

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A bench helper process that speaks JSON lines: it writes one object per line on stdout, and reads
 * commands, one per line, on stdin. It is started through bash so its open-file limit can be raised
 * (`ulimit -n` is per process), and it is killed if the bench process leaves without closing it.
 *
 * @example
 *   const child = BenchChild.spawn({ entry: 'bench/support/load-client.ts', options, fdLimit: 20_000 });
 *   const ready = await child.next('ready', 30_000);
 *   child.command('close');
 *   await child.exited;
 */
export class BenchChild {
  readonly process: ChildProcess;
  readonly exited: Promise<number>;
  readonly #lines: ChildMessage[] = [];
  readonly #waiters: (() => void)[] = [];
  #exitCode: number | undefined;

  private constructor(child: ChildProcess) {
    this.process = child;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exitCode = code ?? (signal === null ? 0 : 128);
        this.#wake();
        resolve(this.#exitCode);
      });
    });
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) {
        process.stderr.write(`${line}\n`);
        return;
      }
      this.#lines.push(JSON.parse(line) as ChildMessage);
      this.#wake();
    });
    const kill = () => child.kill('SIGKILL');
    process.once('exit', kill);
    child.once('exit', () => process.off('exit', kill));
  }

  static spawn(options: SpawnBenchChildOptions): BenchChild {
    // Raise the soft limit as far as the hard limit allows, then become node.
    const script =
      'want=$1; shift; hard=$(ulimit -Hn); ' +
      'if [ "$hard" != unlimited ] && [ "$hard" -lt "$want" ]; then want=$hard; fi; ' +
      'ulimit -n "$want" 2>/dev/null; exec "$@"';
    const node = [process.execPath, ...(options.nodeArgs ?? []), '--import', 'tsx', options.entry];
    const child = spawn(
      'bash',
      ['-c', script, 'bench-child', String(options.fdLimit ?? 1024), ...node, JSON.stringify(options.options)],
      { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    return new BenchChild(child);
  }

  /** The next line of this type (earlier lines of other types stay queued). */
  async next(type: string, timeoutMs: number): Promise<ChildMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.#lines.findIndex((line) => line.type === type);
      if (index >= 0) return this.#lines.splice(index, 1)[0]!;
      if (this.#exitCode !== undefined) throw new Error(`bench child exited (${this.#exitCode}) before '${type}'`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`bench child: no '${type}' within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Writes one command line to the child's stdin. */
  command(line: string): void {
    this.process.stdin?.write(`${line}\n`);
  }

  /** Ends the child: closing stdin asks it to leave; it is killed if it has not within `graceMs`. */
  async stop(graceMs = 5_000): Promise<number> {
    this.process.stdin?.end();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/** This process's open-file limit, raised towards `want` (up to the hard limit) with prlimit when needed. */
export function raiseOwnFdLimit(want: number): number {
  const read = () => {
    const text = execFileSync(
      'prlimit',
      ['--pid', String(process.pid), '--nofile', '--output=SOFT,HARD', '--noheadings', '--raw'],
      {
        encoding: 'utf8',
      },
    );
    const [soft, hard] = text.trim().split(/\s+/);
    const parse = (value: string | undefined) => (value === 'unlimited' ? Number.POSITIVE_INFINITY : Number(value));
    return { soft: parse(soft), hard: parse(hard) };
  };
  try {
    const { soft, hard } = read();
    if (soft >= want) return soft;
    const target = Math.min(want, hard);
    execFileSync('prlimit', [
      '--pid',
      String(process.pid),
      `--nofile=${target}:${Number.isFinite(hard) ? hard : target}`,
    ]);
    return read().soft;
  } catch {
    // No prlimit here: go on with whatever the limit is; failed connections are reported.
    return Number.NaN;
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
