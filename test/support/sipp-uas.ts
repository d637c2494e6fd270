import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import type { SippRun } from './sipp.ts';

/** A UDP port free right now on 127.0.0.1 (for a peer that must be named before it starts). */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  const { port } = socket.address();
  await new Promise<void>((r) => socket.close(() => r()));
  return port;
}

/**
 * SIPp as the far end of a call the bridge places: scenario `scenario` (UAS) on 127.0.0.1:`port`,
 * one call, `exited` resolving with its code (0: the call went as scripted). The bridge's INVITE
 * is retransmitted (Timer A), so one sent before SIPp has bound its port is not lost.
 */
export function startSippUas(scenario: string, port: number, cwd: string): { exited: Promise<SippRun>; kill(): void } {
  const child = spawn(
    'sipp',
    [
      '-sf',
      scenario,
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-mi',
      '127.0.0.1',
      '-m',
      '1',
      '-nostdin',
      '-trace_err',
      '-timeout',
      '90s',
      '-timeout_error',
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
