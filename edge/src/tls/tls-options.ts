import { readFileSync } from 'node:fs';

/** PEM key and certificate (chain) for serving https and wss. */
export interface TlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
}

/**
 * TLS from `VENUS_TLS_KEY_FILE` and `VENUS_TLS_CERT_FILE` (PEM paths); undefined when neither is
 * set, an error when only one is.
 *
 * @example
 *   const tls = tlsFromEnv(process.env);
 *   await serveEdgeNode({ link, port: 8443, ...(tls ? { tls } : {}) });
 */
export function tlsFromEnv(env: Record<string, string | undefined>): TlsOptions | undefined {
  const keyFile = env.VENUS_TLS_KEY_FILE;
  const certFile = env.VENUS_TLS_CERT_FILE;
  if (!keyFile && !certFile) return undefined;
  if (!keyFile || !certFile) throw new Error('set both VENUS_TLS_KEY_FILE and VENUS_TLS_CERT_FILE, or neither');
  return { key: readFileSync(keyFile), cert: readFileSync(certFile) };
}
