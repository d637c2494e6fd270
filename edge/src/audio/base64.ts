/**
 * Strict base64 for client audio. `Buffer.from(s, 'base64')` silently skips garbage (and reads the
 * URL-safe alphabet too), which would turn a client bug into noise on the model's input; here
 * anything but the standard alphabet, with at most two `=` at the very end, is refused.
 */
const OUTSIDE_ALPHABET = /[^A-Za-z0-9+/=]/;

/** Bytes a base64 string decodes to, from its length alone (before paying for the decode). */
export function decodedLength(text: string): number {
  let padding = 0;
  if (text.endsWith('==')) padding = 2;
  else if (text.endsWith('=')) padding = 1;
  return Math.floor(((text.length - padding) * 3) / 4);
}

/**
 * Whether `text` is standard base64 with optional padding. The same language as
 * `/^[A-Za-z0-9+/]*={0,2}$/` plus the length rules, checked as a search for one character outside
 * the alphabet and a look at where `=` starts: about three times faster than the anchored pattern
 * on a 20 ms frame (1,280 characters), and this runs for every appended frame.
 */
export function isStrictBase64(text: string): boolean {
  if (OUTSIDE_ALPHABET.test(text)) return false;
  const remainder = text.length % 4;
  if (remainder === 1) return false;
  const padAt = text.indexOf('=');
  if (padAt < 0) return true;
  // Padding only at the end, at most two, and only on a whole number of 4-character groups.
  if (remainder !== 0 || text.length - padAt > 2) return false;
  return padAt === text.length - 1 || text.charCodeAt(padAt + 1) === 61;
}

/** Decodes standard base64 (padding optional); undefined when the text is not valid base64. */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  if (!isStrictBase64(text)) return undefined;
  const buffer = Buffer.from(text, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
