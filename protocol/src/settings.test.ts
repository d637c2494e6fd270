import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { VenusError } from './errors.ts';
import { pickSettings, readSettings } from './settings.ts';

const Schema = pickSettings(['VENUS_PORT', 'VENUS_REDIS_URL', 'VENUS_SECRETS_KEY', 'VENUS_INFERENCE_THREADS']);

function failure(env: Record<string, string>): VenusError {
  try {
    readSettings('test-process', Schema, env);
  } catch (error) {
    if (VenusError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('the settings were accepted');
}

describe('readSettings', () => {
  it('applies defaults and reads the VENUS_ names', () => {
    const { settings } = readSettings('p', Schema, { VENUS_PORT: '9000', VENUS_REDIS_URL: 'redis://r:6379' });
    expect(settings).toEqual({ VENUS_PORT: 9000, VENUS_REDIS_URL: 'redis://r:6379', VENUS_INFERENCE_THREADS: 1 });
  });

  it('accepts the older names and fills both names in the resolved environment', () => {
    const { settings, env } = readSettings('p', Schema, { PORT: '9001', REDIS_URL: 'redis://r:6379' });
    expect(settings.VENUS_PORT).toBe(9001);
    expect(env).toMatchObject({ VENUS_REDIS_URL: 'redis://r:6379', REDIS_URL: 'redis://r:6379' });
  });

  it('treats an empty value as unset', () => {
    expect(readSettings('p', Schema, { VENUS_REDIS_URL: '' }).settings.VENUS_REDIS_URL).toBeUndefined();
  });

  it('fails with invalid_settings naming the process, the variable and the value', () => {
    const error = failure({ VENUS_PORT: 'eighty', INFERENCE_THREADS: '0' });
    expect(error.code).toBe('invalid_settings');
    expect(error.message).toMatch(/^test-process: bad settings: /);
    expect(error.message).toContain('VENUS_PORT');
    expect(error.message).toContain('"eighty"');
    expect(error.message).toContain('VENUS_INFERENCE_THREADS (read from INFERENCE_THREADS)');
  });

  it('never echoes the value of a secret', () => {
    const Strict = z.object({ VENUS_SECRETS_KEY: z.string().min(32), VENUS_PORT: z.coerce.number().int() });
    expect(() => readSettings('p', Strict, { VENUS_SECRETS_KEY: 'hunter2', VENUS_PORT: 'x' })).toThrow(
      /^p: bad settings: VENUS_SECRETS_KEY: [^;]*[^"]; VENUS_PORT: .*\(got "x"\)$/,
    );
    expect(() => readSettings('p', Strict, { VENUS_SECRETS_KEY: 'hunter2', VENUS_PORT: '1' })).not.toThrow(/hunter2/);
  });

  it('refuses a VENUS_ name and its older name set to different values', () => {
    expect(failure({ VENUS_PORT: '1', PORT: '2' }).message).toContain('VENUS_PORT and its older name PORT');
  });

  it('requires what a process marks required', () => {
    const Required = pickSettings(['VENUS_REDIS_URL']).required({ VENUS_REDIS_URL: true });
    expect(() => readSettings('harness', Required, {})).toThrow(/harness: bad settings: VENUS_REDIS_URL/);
  });
});
