import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

export const SIPP_SCENARIOS = path.resolve('test/fixtures/sipp');

export interface SippRun {
  code: number | null;
  output: string;
}

/**
 * One SIPp (Debian sip-tester) process making or taking one call, with the flags every test run
 * shares (loopback signalling and media, `-timeout 90s -timeout_error` bounding a call that
 * hangs); `exited` resolves with its code and the tail of its output. `cwd` holds its logs.
 */
export function spawnSipp(args: string[], cwd: string): { exited: Promise<SippRun>; kill(): void } {
  const child = spawn(
    'sipp',
    [
      '-i',
      '127.0.0.1',
      '-mi',
      '127.0.0.1',
      '-m',
      '1',
      '-nostdin',
      '-trace_err',
      '-timeout',
      '90s',
      '-timeout_error',
      ...args,
    ],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<SippRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
  return { exited, kill: () => child.kill('SIGKILL') };
}

/**
 * Runs one SIPp call against `target` and resolves when it exits: 0 when every call passed. What
 * SIPp wrote to its `<scenario>_<pid>_errors.log` in `cwd` (which also holds a `pcap` link for the
 * bundled pcap scenarios) is added to the output.
 */
export async function runSipp(target: string, args: string[], cwd: string): Promise<SippRun> {
  const run = await spawnSipp([target, ...args], cwd).exited;
  let output = run.output;
  for (const file of readdirSync(cwd).filter((f) => f.endsWith('_errors.log'))) {
    output += `\n${file}:\n${readFileSync(path.join(cwd, file), 'utf8').slice(-4000)}`;
    rmSync(path.join(cwd, file));
  }
  return { code: run.code, output };
}
