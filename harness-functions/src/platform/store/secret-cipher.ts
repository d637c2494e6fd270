import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { VenusError } from '@venus/protocol';

const PREFIX = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts tenants' function secrets for storage (AES-256-GCM). Each value is bound to its tenant
 * and name as associated data, so a stored value copied under another name or tenant does not
 * decrypt. The key is 32 bytes given as 64 hex or 44 base64 characters, or any other passphrase
 * (hashed with SHA-256; use a long random one).
 *
 * @example
 *   const cipher = new SecretCipher(process.env.VENUS_SECRETS_KEY!);
 *   const stored = cipher.seal('acme', 'API_TOKEN', 'tok_123'); // 'v1:…'
 *   cipher.open('acme', 'API_TOKEN', stored); // 'tok_123'
 */
export class SecretCipher {
  readonly #key: Buffer;

  constructor(key: string) {
    if (key.length === 0) throw new VenusError('invalid_arguments', 'the secrets key is empty');
    if (/^[0-9a-f]{64}$/i.test(key)) this.#key = Buffer.from(key, 'hex');
    else if (/^[A-Za-z0-9+/]{43}=$/.test(key)) this.#key = Buffer.from(key, 'base64');
    else this.#key = createHash('sha256').update(key).digest();
  }

  seal(tenant: string, name: string, value: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(associated(tenant, name));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
  }

  /** The value; a value stored before encryption was turned on (no `v1:`) is returned as it is. */
  open(tenant: string, name: string, stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(associated(tenant, name));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch (cause) {
      throw new VenusError('internal_error', `secret ${name} of tenant ${tenant} does not decrypt with this key`, {
        cause,
      });
    }
  }

  /** Whether a stored value is encrypted (and so needs a key to read). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(PREFIX);
  }
}

function associated(tenant: string, name: string): Buffer {
  return Buffer.from(`${tenant.length}:${tenant}:${name}`, 'utf8');
}
