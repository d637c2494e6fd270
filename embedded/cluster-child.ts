import { type ChildProcess, spawn } from 'node:child_process';
import { PrefixedLines } from './cluster-lines.ts';

/** What is kept of a child's stdout to find its ready line in: the line comes first, this is a bound. */
const MAX_READY_SCAN = 256 * 1024;

export interface ClusterChildSpec {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** Matched against its stdout; the child counts as started once it matches. */
  ready: RegExp;
  cwd?: string;
}

/**
 * One process of the local cluster: a real child whose stdout and stderr lines are written to ours
 * with its name in front, started once its ready line appears, and stopped with SIGTERM (then
 * SIGKILL past a bound) and waited for.
 */
export class ClusterChild {
  readonly name: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<number | null>;
  #scan = '';

  private constructor(spec: ClusterChildSpec, write: (line: string) => void) {
    this.name = spec.name;
    this.#child = spawn(spec.command, spec.args, {
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(spec.cwd ? { cwd: spec.cwd } : {}),
    });
    for (const stream of [this.#child.stdout, this.#child.stderr]) {
      const lines = new PrefixedLines(spec.name, write);
      stream?.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk));
      stream?.on('end', () => lines.end());
    }
    this.#child.stdout?.on('data', (chunk: string) => {
      if (this.#scan.length < MAX_READY_SCAN) this.#scan += chunk;
    });
    this.#exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null)));
      this.#child.once('error', () => resolve(null));
    });
  }

  /**
   * Starts it and resolves with its ready line's match; rejects if it exits or fails to
   * start first (and then stops it).
   */
  static async start(
    spec: ClusterChildSpec,
    write: (line: string) => void,
    readyTimeoutMs: number,
    track?: (child: ClusterChild) => void,
  ): Promise<{ child: ClusterChild; ready: RegExpExecArray }> {
    const child = new ClusterChild(spec, write);
    // Known to the caller from the moment it is spawned, so a stop during startup reaches it too.
    track?.(child);
    const ready = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${spec.name} did not get ready`)), readyTimeoutMs);
      const look = (): void => {
        const match = spec.ready.exec(child.#scan);
        if (!match) return;
        clearTimeout(timer);
        child.#child.stdout?.off('data', look);
        resolve(match);
      };
      child.#child.stdout?.on('data', look);
      child.#child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`${spec.name} could not start: ${error.message}`));
      });
      void child.#exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${spec.name} exited (${code}) before it was ready`));
      });
    }).catch(async (error: unknown) => {
      await child.stop(0);
      throw error;
    });
    child.#scan = '';
    return { child, ready };
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null && this.#child.pid !== undefined;
  }

  /** Resolves with the exit code (128 for a signal) once it has exited. */
  get exited(): Promise<number | null> {
    return this.#exited;
  }

  /** SIGTERM, then SIGKILL if it has not exited within `killAfterMs`; resolves once it has exited. */
  async stop(killAfterMs: number): Promise<number | null> {
    if (!this.running) return this.#exited;
    this.#child.kill('SIGTERM');
    const killer = setTimeout(() => this.#child.kill('SIGKILL'), killAfterMs);
    try {
      return await this.#exited;
    } finally {
      clearTimeout(killer);
    }
  }
}
