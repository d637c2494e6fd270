import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVenusProcess, type VenusProcess } from './support/venus-process.ts';

/**
 * `npm start` as a new user runs it (embedded/start.ts in its own process, no TLS settings): besides
 * ws it serves wss on a second port with a self-signed certificate it prints with its SHA-256
 * fingerprint. The `openai` package's realtime client, which only speaks wss, then runs a typed
 * turn from another process that was given nothing but NODE_EXTRA_CA_CERTS; without it the same
 * program is refused by TLS.
 */
const run = promisify(execFile);
const CLIENT = path.join(import.meta.dirname, 'fixtures', 'tls', 'openai-realtime-turn.ts');
const BANNER =
  /realtime\s+(wss:\/\/127\.0\.0\.1:\d+)\/v1\/realtime[^\n]*\n\s+tls cert\s+(\S+)\n\s+SHA-256 ([0-9A-F:]+)\n\s+trust it: NODE_EXTRA_CA_CERTS=(\S+)/;

let start: VenusProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'venus-start-tls-'));
  start = await startVenusProcess(
    'embedded/start.ts',
    { VENUS_PORT: '0', VENUS_TLS_PORT: '0', VENUS_TLS_DIR: dir },
    BANNER,
  );
}, 120_000);
afterAll(async () => {
  await start?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** What the client program printed: its URL, the event types it saw, and the reply or its error. */
interface ClientOutcome {
  url?: string;
  types?: string[];
  transcript?: string;
  error?: string;
}

/** Runs the client program in a fresh process with exactly this environment. */
async function client(url: string, env: Record<string, string>): Promise<ClientOutcome> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', CLIENT, url], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    timeout: 90_000,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return JSON.parse(stdout.trim().split('\n').at(-1) || '{}') as ClientOutcome;
}

describe('npm start serves wss with a generated certificate', () => {
  it('prints the certificate and its fingerprint; the openai realtime client runs a turn trusting it by NODE_EXTRA_CA_CERTS only', async () => {
    const [, wss, certFile, fingerprint, trustFile] = start.ready;
    expect(trustFile).toBe(certFile);
    const cert = new X509Certificate(await readFile(certFile!, 'utf8'));
    expect(cert.fingerprint256).toBe(fingerprint);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');

    const baseURL = `${wss!.replace('wss', 'https')}/v1`;
    const trusted = await client(baseURL, { NODE_EXTRA_CA_CERTS: certFile! });
    expect(trusted.url).toBe(`${wss}/v1/realtime?model=venus-reference`);
    expect(trusted.error).toBeUndefined();
    expect(trusted.types).toEqual(expect.arrayContaining(['session.created', 'response.created', 'response.done']));
    expect(trusted.transcript).toMatch(/Paris/);

    // The same program without the variable: the certificate is not trusted, so no session.
    const untrusted = await client(baseURL, {});
    expect(String(untrusted.error)).toMatch(/self[- ]signed|certificate/i);
    expect(untrusted.types).toEqual([]);
  }, 180_000);
});
