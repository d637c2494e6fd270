import type { FunctionSpecInput, FunctionsCatalog } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

export interface CatalogFixture {
  catalog: FunctionsCatalog;
  cleanup(): Promise<void>;
}

export function greetSpec(overrides: Partial<FunctionSpecInput> = {}, greeting = 'Hello'): FunctionSpecInput {
  return {
    name: 'greet',
    description: 'Greets someone by name.',
    parameters: {
      type: 'object',
      properties: { who: { type: 'string', minLength: 1, maxLength: 40 }, shout: { type: 'boolean', default: false } },
      required: ['who'],
    },
    examples: ['greet Ada', 'say hello to Grace'],
    kind: {
      type: 'module',
      source: `export default async function ({ who, shout }, ctx) {
        ctx.log('greeting', who);
        const text = '${greeting} ' + who;
        return { speech: shout ? text.toUpperCase() : text, data: { who } };
      }`,
      limits: { cpuMs: 500, memoryMb: 64, wallMs: 3000 },
    },
    ...overrides,
  };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<VenusError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(VenusError.isInstance(error), `expected a VenusError ${code}`).toBe(true);
  expect((error as VenusError).code).toBe(code);
  return error as VenusError;
}

/**
 * What every FunctionsCatalog does, whatever stores it: versions, latest-by-default, tenant
 * isolation, secrets that are never listed with values, and nothing stored by a failed deploy.
 */
export function functionsCatalogContract(label: string, open: () => Promise<CatalogFixture>): void {
  describe(`FunctionsCatalog contract: ${label}`, () => {
    let fixture: CatalogFixture;
    let catalog: FunctionsCatalog;
    beforeAll(async () => {
      fixture = await open();
      catalog = fixture.catalog;
    });
    afterAll(async () => {
      await fixture.cleanup();
    });

    it('deploys, invokes the latest version by default and keeps earlier versions invocable', async () => {
      const first = await catalog.deploy('acme', greetSpec());
      expect(first.version).toBe(1);
      const second = await catalog.deploy('acme', greetSpec({}, 'Welcome'));
      expect(second.version).toBe(2);

      const latest = await catalog.invoke('acme', 'greet', { who: 'Ada' });
      expect(latest).toMatchObject({ ok: true, version: 2, speech: 'Welcome Ada', data: { who: 'Ada' } });
      expect(latest.logs).toEqual(['greeting Ada']);
      const pinned = await catalog.invoke('acme', 'greet', { who: 'Ada', shout: true }, { version: 1 });
      expect(pinned).toMatchObject({ ok: true, version: 1, speech: 'HELLO ADA' });

      expect((await catalog.listVersions('acme', 'greet')).map((v) => v.version)).toEqual([1, 2]);
      expect(await catalog.list('acme')).toEqual([
        expect.objectContaining({
          name: 'greet',
          kind: 'module',
          latestVersion: 2,
          description: 'Greets someone by name.',
        }),
      ]);
      expect((await catalog.get('acme', 'greet'))?.version).toBe(2);
      expect((await catalog.get('acme', 'greet', 1))?.spec.kind).toMatchObject({ type: 'module' });
      expect(await catalog.get('acme', 'greet', 9)).toBeNull();
    });

    it('keeps tenants apart: another tenant can neither see, invoke nor delete a function', async () => {
      await catalog.deploy('acme', greetSpec({ name: 'private_greet' }));
      expect(await catalog.get('globex', 'private_greet')).toBeNull();
      expect(await catalog.list('globex')).toEqual([]);
      expect(await catalog.listVersions('globex', 'private_greet')).toEqual([]);
      const error = await rejectsWith(catalog.invoke('globex', 'private_greet', { who: 'x' }), 'function_not_found');
      const unknown = await rejectsWith(catalog.invoke('globex', 'never_deployed', { who: 'x' }), 'function_not_found');
      expect(error.message).toBe(unknown.message.replace('never_deployed', 'private_greet'));
      expect(await catalog.delete('globex', 'private_greet')).toBe(false);
      expect(await catalog.logs('acme', 'private_greet')).toEqual([]);
      await rejectsWith(catalog.logs('globex', 'private_greet'), 'function_not_found');
      expect((await catalog.invoke('acme', 'private_greet', { who: 'Bo' })).ok).toBe(true);
    });

    it('stores nothing when a deploy fails validation', async () => {
      const bad: FunctionSpecInput[] = [
        greetSpec({ name: 'Bad-Name' }),
        greetSpec({ name: 'bad_schema', parameters: { type: 'object', properties: { x: { type: 'date' } } } as never }),
        greetSpec({ name: 'bad_required', parameters: { type: 'object', properties: {}, required: ['x'] } }),
        greetSpec({ name: 'bad_syntax', kind: { type: 'module', source: 'export default async (' } }),
        greetSpec({
          name: 'bad_import',
          kind: { type: 'module', source: 'import fs from "node:fs"; export default () => 1' },
        }),
        greetSpec({ name: 'bad_export', kind: { type: 'module', source: 'export const answer = 42' } }),
        greetSpec({
          name: 'bad_secret',
          kind: { type: 'module', source: 'export default () => 1', grants: { env: ['NOT_SET'] } },
        }),
        greetSpec({ name: 'bad_http', kind: { type: 'http', url: 'ftp://example.com/x' } }),
      ];
      for (const spec of bad) await rejectsWith(catalog.deploy('initech', spec), 'invalid_arguments');
      expect(await catalog.list('initech')).toEqual([]);
    });

    it('validates arguments against the declared schema before running anything', async () => {
      await catalog.deploy('acme', greetSpec({ name: 'strict_greet' }));
      await rejectsWith(catalog.invoke('acme', 'strict_greet', {}), 'invalid_arguments');
      await rejectsWith(catalog.invoke('acme', 'strict_greet', { who: 'x', extra: 1 }), 'invalid_arguments');
      await rejectsWith(catalog.invoke('acme', 'strict_greet', { who: 'x'.repeat(41) }), 'invalid_arguments');
      expect(await catalog.logs('acme', 'strict_greet')).toEqual([]);
    });

    it('logs each invocation, newest first, failures with their error', async () => {
      await catalog.deploy('acme', {
        name: 'flaky',
        description: 'Fails on demand.',
        parameters: { type: 'object', properties: { fail: { type: 'boolean' } }, required: ['fail'] },
        kind: {
          type: 'module',
          source: `export async function run({ fail }, ctx) { ctx.log('fail?', fail); if (fail) throw new Error('asked to'); return 'fine'; }`,
        },
      });
      expect(await catalog.invoke('acme', 'flaky', { fail: false })).toMatchObject({ ok: true, speech: 'fine' });
      const failed = await catalog.invoke('acme', 'flaky', { fail: true });
      expect(failed).toMatchObject({ ok: false, error: { code: 'function_error', message: 'Error: asked to' } });
      const logs = await catalog.logs('acme', 'flaky', { limit: 10 });
      expect(logs.map((entry) => entry.ok)).toEqual([false, true]);
      expect(logs[0]).toMatchObject({ version: 1, error: { code: 'function_error' }, logs: ['fail? true'] });
      expect(await catalog.logs('acme', 'flaky', { limit: 1 })).toHaveLength(1);
    });

    it('deletes every version and its logs; a redeploy starts again at version 1', async () => {
      await catalog.deploy('acme', greetSpec({ name: 'short_lived' }));
      await catalog.deploy('acme', greetSpec({ name: 'short_lived' }));
      await catalog.invoke('acme', 'short_lived', { who: 'x' });
      expect(await catalog.delete('acme', 'short_lived')).toBe(true);
      expect(await catalog.delete('acme', 'short_lived')).toBe(false);
      expect(await catalog.get('acme', 'short_lived')).toBeNull();
      expect(await catalog.listVersions('acme', 'short_lived')).toEqual([]);
      await rejectsWith(catalog.invoke('acme', 'short_lived', { who: 'x' }), 'function_not_found');
      expect((await catalog.deploy('acme', greetSpec({ name: 'short_lived' }))).version).toBe(1);
      expect(await catalog.logs('acme', 'short_lived')).toEqual([]);
    });

    it('keeps secrets per tenant, lists names only, and hands a function only its granted ones', async () => {
      await catalog.setSecret('acme', 'API_TOKEN', 'tok-acme');
      await catalog.setSecret('acme', 'OTHER_SECRET', 'not-granted');
      await catalog.setSecret('globex', 'API_TOKEN', 'tok-globex');
      expect(await catalog.listSecrets('acme')).toEqual(['API_TOKEN', 'OTHER_SECRET']);
      expect(JSON.stringify(await catalog.listSecrets('acme'))).not.toContain('tok-');
      await catalog.deploy('acme', {
        name: 'env_probe',
        description: 'Reports which secrets it sees.',
        kind: {
          type: 'module',
          source:
            'export default async (args, ctx) => ({ data: { keys: Object.keys(ctx.env), reversed: [...ctx.env.API_TOKEN].reverse().join(""), echoed: ctx.env.API_TOKEN } })',
          grants: { env: ['API_TOKEN'] },
        },
      });
      const probe = await catalog.invoke('acme', 'env_probe', {});
      // The function got the value; an echo of it is masked in what the platform answers.
      expect(probe).toMatchObject({
        ok: true,
        data: { keys: ['API_TOKEN'], reversed: 'emca-kot', echoed: '[secret API_TOKEN]' },
      });

      expect(await catalog.deleteSecret('acme', 'API_TOKEN')).toBe(true);
      expect(await catalog.deleteSecret('acme', 'API_TOKEN')).toBe(false);
      const missing = await catalog.invoke('acme', 'env_probe', {});
      expect(missing).toMatchObject({ ok: false, error: { code: 'secret_missing' } });
      expect(await catalog.listSecrets('globex')).toEqual(['API_TOKEN']);
      await rejectsWith(catalog.setSecret('acme', 'not a name', 'x'), 'invalid_arguments');
      await rejectsWith(catalog.setSecret('acme', 'HUGE', 'x'.repeat(5000)), 'invalid_arguments');
    });

    it('keeps only the newest versions', async () => {
      for (let i = 0; i < 22; i++) await catalog.deploy('hooli', greetSpec({ name: 'busy' }));
      const versions = (await catalog.listVersions('hooli', 'busy')).map((v) => v.version);
      expect(versions).toHaveLength(20);
      expect(versions[0]).toBe(3);
      expect(versions.at(-1)).toBe(22);
    });
  });
}
