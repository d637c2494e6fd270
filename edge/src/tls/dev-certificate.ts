import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { selfSignedCertificate } from './self-signed-certificate.ts';
import type { TlsOptions } from './tls-options.ts';

export interface DevCertificate extends TlsOptions {
  key: string;
  cert: string;
  /** Where the certificate is, for NODE_EXTRA_CA_CERTS. */
  certFile: string;
  /** SHA-256 fingerprint, colon-separated hex, as browsers and `openssl x509 -fingerprint` show it. */
  fingerprint256: string;
  /** Whether an earlier run's certificate was reused. */
  reused: boolean;
}

/** A certificate is reused while it has at least this long to live. */
const MIN_REMAINING_MS = 24 * 60 * 60 * 1000;
const VALID_DAYS = 30;

/**
 * The local-development certificate `npm start` serves wss with: self-signed (selfSignedCertificate)
 * for localhost, 127.0.0.1, ::1 and `extraHosts`, kept in `dir` and reused across restarts while
 * it stays valid for another day and covers those names, so a client that trusts it once
 * (NODE_EXTRA_CA_CERTS=<certFile>) keeps working. The key file is readable by its owner only.
 *
 * @example
 *   const dev = await devCertificate('/tmp/realtime-venus-tls');
 *   console.log(`NODE_EXTRA_CA_CERTS=${dev.certFile}  SHA-256 ${dev.fingerprint256}`);
 */
export async function devCertificate(dir: string, extraHosts: readonly string[] = []): Promise<DevCertificate> {
  const hosts = [...new Set(['localhost', '127.0.0.1', '::1', ...extraHosts])];
  const certFile = path.join(dir, 'localhost-cert.pem');
  const keyFile = path.join(dir, 'localhost-key.pem');
  const existing = await Promise.all([readFile(keyFile, 'utf8'), readFile(certFile, 'utf8')]).catch(() => undefined);
  if (existing !== undefined) {
    const [key, cert] = existing;
    const x509 = parse(cert);
    if (x509 !== undefined && stillGood(x509, hosts)) {
      return { key, cert, certFile, fingerprint256: x509.fingerprint256, reused: true };
    }
  }
  const { key, cert } = await selfSignedCertificate({ hosts, days: VALID_DAYS });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(keyFile, key, { mode: 0o600 });
  await writeFile(certFile, cert, { mode: 0o644 });
  return { key, cert, certFile, fingerprint256: new X509Certificate(cert).fingerprint256, reused: false };
}

function parse(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function stillGood(x509: X509Certificate, hosts: readonly string[]): boolean {
  if (Date.parse(x509.validTo) - Date.now() < MIN_REMAINING_MS) return false;
  return hosts.every((host) => (isIP(host) ? x509.checkIP(host) : x509.checkHost(host)) !== undefined);
}
