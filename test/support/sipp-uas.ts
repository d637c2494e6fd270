import { createSocket } from 'node:dgram';
import { type SippRun, spawnSipp } from './sipp.ts';

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
  return spawnSipp(['-sf', scenario, '-p', String(port)], cwd);
}
