import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, ERROR_TABLE, errorCodeInfo, isErrorCode, VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';

/**
 * The error-code table is the only list of codes (CLIENT_CODES and the HTTP helpers' own status
 * maps used to drift from it). Typing keeps most call sites honest; this scans the source for code
 * literals handed to the error constructors and HTTP helpers, and for HTTP statuses that disagree
 * with the table, so a cast or a `string` parameter cannot slip an unknown code through.
 */
const ROOTS = ['protocol', 'edge', 'gpu-worker', 'harness-functions', 'embedded'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const sources = ROOTS.flatMap((root) => sourceFiles(path.resolve(root))).map((file) => ({
  file: path.relative(process.cwd(), file),
  text: readFileSync(file, 'utf8'),
}));

const CODE_LITERAL = [
  /new VenusError\(\s*'([a-z_]+)'/g,
  /toVenusError\([^,()]+,\s*'([a-z_]+)'/g,
  /(?:httpError|apiError)\(\s*c,\s*[^,]+,\s*'([a-z_]+)'/g,
];

/** Deliberate statuses other than the table's, each with its reason. */
const STATUS_OVERRIDES = new Set([
  'invalid_arguments 404', // key routes: `no key <id>` names the id parameter that found nothing
  'invalid_arguments 409', // key routes: a revoked key cannot be changed
]);

describe('the error-code table', () => {
  it('is the source of the code list and of retryability', () => {
    expect(ERROR_CODES).toEqual(Object.keys(ERROR_TABLE));
    expect(new VenusError('model_unavailable', 'x').retryable).toBe(true);
    expect(new VenusError('invalid_event', 'x').retryable).toBe(false);
    expect(isErrorCode('rate_limited')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });

  it('answers a client-facing code with a 4xx', () => {
    const clientFacing = ERROR_CODES.filter((code) => errorCodeInfo(code).clientType !== 'server_error');
    expect(clientFacing).toContain('invalid_event');
    expect(clientFacing.filter((code) => errorCodeInfo(code).httpStatus >= 500)).toEqual([]);
  });

  it('holds every code literal the runtime raises or answers with', () => {
    const found: { file: string; code: string }[] = [];
    for (const { file, text } of sources) {
      for (const pattern of CODE_LITERAL) {
        for (const match of text.matchAll(pattern)) found.push({ file, code: match[1]! });
      }
    }
    // The scan itself must see the call sites, or this test could not fail.
    expect(found.length).toBeGreaterThan(50);
    expect(found.filter(({ code }) => !isErrorCode(code))).toEqual([]);
  });

  it('agrees with the HTTP statuses the edge answers with, but for the listed exceptions', () => {
    const disagreements: string[] = [];
    for (const { file, text } of sources) {
      for (const match of text.matchAll(/(?:httpError|apiError)\(\s*c,\s*(\d{3}),\s*'([a-z_]+)'/g)) {
        const [, status, code] = match as unknown as [string, string, string];
        if (!isErrorCode(code)) continue;
        if (errorCodeInfo(code).httpStatus === Number(status)) continue;
        if (!STATUS_OVERRIDES.has(`${code} ${status}`)) disagreements.push(`${file}: ${code} ${status}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});
