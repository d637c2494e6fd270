import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

export const SIPP_SCENARIOS = path.resolve('test/fixtures/sipp');

export interface SippRun {
  code: number | null;
  output: string;
}

/**
 * Runs one SIPp (Debian sip-tester) call against `target` and resolves when it exits: 0 when every
 * call passed. `-timeout 90s -timeout_error` bounds a call that hangs; `cwd` holds its logs (and a
 * `pcap` link for the bundled pcap scenarios).
 */
export function runSipp(target: string, args: string[], cwd: string): Promise<SippRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'sipp',
      [
        target,
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
    child.stdout.on('data', (d: Buffer) => {
      output = (output + d.toString()).slice(-20_000);
    });
    child.stderr.on('data', (d: Buffer) => {
      output = (output + d.toString()).slice(-20_000);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      // SIPp writes what went wrong to <scenario>_<pid>_errors.log: keep it with the output.
      for (const file of readdirSync(cwd).filter((f) => f.endsWith('_errors.log'))) {
        output += `\n${file}:\n${readFileSync(path.join(cwd, file), 'utf8').slice(-4000)}`;
        rmSync(path.join(cwd, file));
      }
      resolve({ code, output });
    });
  });
}
