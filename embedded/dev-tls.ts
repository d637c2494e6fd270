import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DevCertificate, devCertificate, type TlsOptions } from '@venus/edge';
import type { Logger } from '@venus/protocol';

export interface DevTlsSettings {
  VENUS_HOST: string;
  VENUS_TLS_PORT: number;
  VENUS_TLS_DIR?: string | undefined;
  VENUS_TLS_SELF_SIGNED: '0' | '1';
}

/**
 * `npm start`'s second, TLS listener: when no key and certificate of its own are configured
 * (VENUS_TLS_KEY_FILE / VENUS_TLS_CERT_FILE make the one listener https instead), https and wss are
 * served on VENUS_TLS_PORT with a self-signed development certificate (devCertificate), so clients
 * that insist on `wss:` (the `openai` package's realtime client) connect once they trust it. A
 * machine without `openssl` gets a warning and plain ws only.
 */
export async function devTlsListener(
  settings: DevTlsSettings,
  configured: TlsOptions | undefined,
  log: Logger,
): Promise<{ secure?: { port: number; tls: DevCertificate }; certificate?: DevCertificate }> {
  if (configured !== undefined || settings.VENUS_TLS_SELF_SIGNED === '0') return {};
  const dir = settings.VENUS_TLS_DIR ?? path.join(tmpdir(), 'realtime-venus-tls');
  const wildcard = ['0.0.0.0', '::', ''].includes(settings.VENUS_HOST);
  try {
    const certificate = await devCertificate(dir, wildcard ? [] : [settings.VENUS_HOST]);
    return { secure: { port: settings.VENUS_TLS_PORT, tls: certificate }, certificate };
  } catch (err) {
    log.warn({ err }, 'no self-signed certificate could be made: serving ws:// only');
    return {};
  }
}

/** The banner lines that say where wss is and how a client trusts the certificate. */
export function devTlsBanner(secureUrl: string | undefined, certificate: DevCertificate | undefined): string[] {
  if (secureUrl === undefined || certificate === undefined) return [];
  return [
    `  realtime   ${secureUrl.replace(/^https/, 'wss')}/v1/realtime   (TLS, self-signed development certificate)`,
    `  tls cert   ${certificate.certFile}`,
    `             SHA-256 ${certificate.fingerprint256}`,
    `             trust it: NODE_EXTRA_CA_CERTS=${certificate.certFile} node your-client.js`,
  ];
}
