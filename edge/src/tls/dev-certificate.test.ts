import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { devCertificate } from './dev-certificate.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('devCertificate', () => {
  it('makes a certificate for the local names once, reuses it, and replaces one that is unusable', async () => {
    const dir = path.join(await mkdtemp(path.join(tmpdir(), 'venus-dev-cert-')), 'tls');
    dirs.push(path.dirname(dir));
    const first = await devCertificate(dir);
    expect(first.reused).toBe(false);
    const x509 = new X509Certificate(first.cert);
    expect(x509.fingerprint256).toBe(first.fingerprint256);
    expect(x509.checkHost('localhost')).toBe('localhost');
    expect(x509.checkIP('::1')).toBe('::1');
    expect((await stat(path.join(dir, 'localhost-key.pem'))).mode & 0o077).toBe(0);

    const again = await devCertificate(dir);
    expect(again).toMatchObject({ reused: true, fingerprint256: first.fingerprint256, certFile: first.certFile });

    // A name the certificate does not cover, or a file that is not a certificate: a new one is made.
    const wider = await devCertificate(dir, ['venus.local']);
    expect(wider.reused).toBe(false);
    expect(new X509Certificate(wider.cert).checkHost('venus.local')).toBe('venus.local');
    await writeFile(first.certFile, 'not a certificate');
    expect((await devCertificate(dir)).reused).toBe(false);
  });
});
