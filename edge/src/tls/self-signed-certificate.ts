import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TlsOptions } from './tls-options.ts';

const run = promisify(execFile);

export interface SelfSignedOptions {
  /** Names and addresses the certificate is valid for (default localhost, 127.0.0.1, ::1). */
  hosts?: readonly string[];
  days?: number;
}

/**
 * A throwaway self-signed certificate (P-256) made with the `openssl` command, for local wss and
 * for tests; a client trusts it by taking `cert` as its CA. Not for production: use a real
 * certificate (VENUS_TLS_KEY_FILE / VENUS_TLS_CERT_FILE) there.
 *
 * @example
 *   const tls = await selfSignedCertificate();
 *   const server = await serveEdgeNode({ link, port: 0, tls });
 *   new WebSocket(`${server.url.replace('https', 'wss')}/v1/realtime`, { ca: tls.cert });
 */
export async function selfSignedCertificate(options: SelfSignedOptions = {}): Promise<{ key: string; cert: string }> {
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1'];
  const altNames = hosts.map((host) => (/^[\d.]+$|:/.test(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
  const dir = await mkdtemp(path.join(tmpdir(), 'venus-tls-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      String(options.days ?? 2),
      '-subj',
      `/CN=${hosts[0] ?? 'localhost'}`,
      '-addext',
      `subjectAltName=${altNames}`,
    ]).catch((cause: unknown) => {
      throw new Error('could not make a self-signed certificate: is `openssl` installed?', { cause });
    });
    const [key, cert] = await Promise.all([readFile(keyFile, 'utf8'), readFile(certFile, 'utf8')]);
    return { key, cert } satisfies TlsOptions;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
