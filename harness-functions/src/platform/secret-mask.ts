/**
 * Masks a function's granted secret values in what the platform keeps or answers of an invocation:
 * its log lines, its error message and its reply. A function that logs `ctx.env.TOKEN`, throws an
 * error quoting it, or echoes it would otherwise put the secret into the invoke API's answer, the
 * stored invocation logs, a delegation's failure reason and the session timeline. Each value is
 * replaced by `[secret NAME]` as itself and in the encodings it most often travels in (base64,
 * base64url, URL-encoded); in JSON text, also JSON-escaped. Values shorter than
 * MIN_MASKED_SECRET_CHARS are left alone: they would match ordinary text by chance.
 *
 * @example
 *   const mask = secretMask({ TOKEN: 'tok_abc123' });
 *   mask.text('sent tok_abc123'); // 'sent [secret TOKEN]'
 */
export const MIN_MASKED_SECRET_CHARS = 6;

export interface SecretMask {
  /** Plain text (a log line, an error message). */
  text(value: string): string;
  /** JSON text: the replacement is itself valid inside a JSON string. */
  json(value: string): string;
}

const IDENTITY: SecretMask = { text: (value) => value, json: (value) => value };

export function secretMask(secrets: Record<string, string>): SecretMask {
  const plain: [string, string][] = [];
  for (const [name, secret] of Object.entries(secrets)) {
    if (secret.length < MIN_MASKED_SECRET_CHARS) continue;
    const label = `[secret ${name}]`;
    const forms = new Set([
      secret,
      Buffer.from(secret).toString('base64'),
      Buffer.from(secret).toString('base64url'),
      encodeURIComponent(secret),
    ]);
    for (const form of forms) plain.push([form, label]);
  }
  if (plain.length === 0) return IDENTITY;
  // Longest first, so a form that contains another is replaced whole.
  plain.sort((a, b) => b[0].length - a[0].length);
  const escaped = plain.map(([form, label]): [string, string] => [JSON.stringify(form).slice(1, -1), label]);
  const replace = (value: string, pairs: [string, string][]) =>
    pairs.reduce((text, [form, label]) => (text.includes(form) ? text.replaceAll(form, label) : text), value);
  return {
    text: (value) => replace(value, plain),
    json: (value) => replace(value, escaped),
  };
}
