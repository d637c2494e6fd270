import { fromBase64Url } from './api-key-format.ts';

const encoder = new TextEncoder();

/**
 * HMAC-SHA-256 under a key derived from the deployment secret for one purpose (`api-key-hash`,
 * `client-token`), so one secret in the environment never signs two kinds of thing. Web Crypto
 * only, so the same code runs on Node and on Workers; verification is constant time.
 *
 * @example
 *   const hash = await KeyedHash.create(process.env.VENUS_AUTH_SECRET!, 'api-key-hash');
 *   const stored = await hash.hex(key);
 *   await hash.verifyHex(presented, stored); // true or false
 */
export class KeyedHash {
  readonly #key: CryptoKey;

  private constructor(key: CryptoKey) {
    this.#key = key;
  }

  static async create(secret: string, purpose: string): Promise<KeyedHash> {
    const root = await importHmac(encoder.encode(secret));
    const derived = new Uint8Array(await crypto.subtle.sign('HMAC', root, encoder.encode(`venus/${purpose}/v1`)));
    return new KeyedHash(await importHmac(derived));
  }

  async sign(text: string): Promise<Uint8Array> {
    return new Uint8Array(await crypto.subtle.sign('HMAC', this.#key, encoder.encode(text)));
  }

  async hex(text: string): Promise<string> {
    return Array.from(await this.sign(text), (byte) => byte.toString(16).padStart(2, '0')).join('');
  }

  async verify(text: string, mac: Uint8Array): Promise<boolean> {
    return crypto.subtle.verify('HMAC', this.#key, mac as Uint8Array<ArrayBuffer>, encoder.encode(text));
  }

  async verifyHex(text: string, macHex: string): Promise<boolean> {
    if (!/^[0-9a-f]{64}$/.test(macHex)) return false;
    const mac = new Uint8Array(32);
    for (let i = 0; i < 32; i++) mac[i] = Number.parseInt(macHex.slice(i * 2, i * 2 + 2), 16);
    return this.verify(text, mac);
  }

  async verifyBase64Url(text: string, macText: string): Promise<boolean> {
    const mac = fromBase64Url(macText);
    return mac !== undefined && mac.length === 32 && this.verify(text, mac);
  }
}

function importHmac(bytes: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', bytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
}
