/**
 * API keys look like `vk_<id>_<secret>`: the id is public (it names the key in listings, logs and
 * the REST routes, and is how a presented key is found without scanning), the secret is 32 random
 * bytes that are never stored, only their keyed hash.
 */
const KEY_PATTERN = /^vk_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

export interface ParsedApiKey {
  id: string;
  secret: string;
}

export function parseApiKey(key: string): ParsedApiKey | undefined {
  const match = KEY_PATTERN.exec(key);
  if (match === null) return undefined;
  return { id: match[1]!, secret: match[2]! };
}

export function formatApiKey(id: string, secret: string): string {
  return `vk_${id}_${secret}`;
}

/** The part of a key that may be shown after creation. */
export function keyPrefix(id: string): string {
  return `vk_${id}_`;
}

export function newKeyId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}

export function newKeySecret(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

export function base64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function fromBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'));
    return Uint8Array.from(binary, (char) => char.charCodeAt(0));
  } catch {
    return undefined;
  }
}
