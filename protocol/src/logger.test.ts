import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createRootLogger, LOG_LEVELS, loggingFromEnv, REDACTED, redactLogFields } from './logger.ts';

/** A destination that keeps the JSON lines pino writes, parsed. */
function captured(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('redactLogFields', () => {
  it('redacts everything under pii unless pii logging is on', () => {
    const fields = { session: 's1', pii: { text: 'my card is 4111', transcript: ['hi'] } };
    expect(redactLogFields(fields, { pii: false })).toEqual({ session: 's1', pii: REDACTED });
    expect(redactLogFields(fields, { pii: true })).toEqual(fields);
  });

  it('always redacts credentials, at any depth and whatever the pii switch', () => {
    const fields = {
      authorization: 'Bearer abc',
      request: { headers: { Authorization: 'Bearer abc', 'x-api-key': 'k' } },
      apiKey: 'k1',
      secretsKey: 'base64',
      list: [{ secret: 'x', ok: 1 }],
    };
    expect(redactLogFields(fields, { pii: true })).toEqual({
      authorization: REDACTED,
      request: { headers: { Authorization: REDACTED, 'x-api-key': REDACTED } },
      apiKey: REDACTED,
      secretsKey: REDACTED,
      list: [{ secret: REDACTED, ok: 1 }],
    });
  });

  it('leaves errors and class instances to the serializers and does not mutate its input', () => {
    const err = new Error('boom');
    const fields = { err, pii: { text: 't' } };
    const out = redactLogFields(fields, { pii: false });
    expect(out.err).toBe(err);
    expect(fields.pii).toEqual({ text: 't' });
  });
});

describe('createRootLogger', () => {
  it('writes JSON lines with the component and redacts in log fields and child bindings', () => {
    const { lines, stream } = captured();
    const log = createRootLogger({ level: 'info', pii: false, destination: stream }).child({
      component: 'test',
      apiKey: 'k',
    });
    log.info({ session: 's1', pii: { text: 'hello' } }, 'heard');
    log.debug('below the level');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      component: 'test',
      apiKey: REDACTED,
      session: 's1',
      pii: REDACTED,
      msg: 'heard',
    });
  });

  it('serializes an error with its stack', () => {
    const { lines, stream } = captured();
    const log = createRootLogger({ level: 'info', pii: false, destination: stream });
    log.error({ err: new Error('boom') }, 'failed');
    expect(lines[0]?.err).toMatchObject({ type: 'Error', message: 'boom' });
    expect(String((lines[0]?.err as { stack?: string } | undefined)?.stack)).toContain('logger.test.ts');
  });
});

describe('loggingFromEnv', () => {
  it('defaults to info, is silent under vitest, and takes VENUS_LOG_LEVEL and VENUS_LOG_PII', () => {
    expect(loggingFromEnv({})).toEqual({ level: 'info', pii: false });
    expect(loggingFromEnv({ VITEST: 'true' })).toEqual({ level: 'silent', pii: false });
    expect(loggingFromEnv({ VITEST: 'true', VENUS_LOG_LEVEL: 'debug', VENUS_LOG_PII: '1' })).toEqual({
      level: 'debug',
      pii: true,
    });
    expect(loggingFromEnv({ VENUS_LOG_LEVEL: 'loud' }).level).toBe('info');
    expect(LOG_LEVELS).toContain('silent');
  });
});
