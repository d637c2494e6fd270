/**
 * Strict base64 for client audio. `Buffer.from(s, 'base64')` silently skips garbage, which would turn
 * a client bug into noise on the model's input; here anything but the standard alphabet is refused.
 */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes a base64 string decodes to, from its length alone (before paying for the decode). */
export function decodedLength(text: string): number {
  let padding = 0;
  if (text.endsWith('==')) padding = 2;
  else if (text.endsWith('=')) padding = 1;
  return Math.floor(((text.length - padding) * 3) / 4);
}

/** Decodes standard base64 (padding optional); undefined when the text is not valid base64. */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined;
  const remainder = text.length % 4;
  if (remainder === 1) return undefined;
  if (text.includes('=') && remainder !== 0) return undefined;
  const buffer = Buffer.from(text, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
