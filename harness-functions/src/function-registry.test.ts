import { VenusError } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBuiltinFunctions } from './builtins/builtin-functions.ts';
import type { VenusFunction } from './function-definition.ts';
import { FunctionRegistry } from './function-registry.ts';

function fakeFunction(name: string): VenusFunction<{ n: number }> {
  return {
    name,
    description: 'A fake for registry tests.',
    parameters: z.object({ n: z.number() }),
    delivery: 'silent',
    examples: [],
    extract: () => null,
    run: async ({ n }) => ({ data: n, speech: String(n) }),
  };
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return VenusError.isInstance(error) ? error.code : 'not a VenusError';
  }
  return undefined;
}

describe('FunctionRegistry', () => {
  it('registers, gets and lists in registration order', () => {
    const registry = new FunctionRegistry(createBuiltinFunctions());
    expect(registry.list().map((fn) => fn.name)).toEqual(['world_clock', 'calculator', 'weather', 'work_status']);
    expect(registry.get('weather')?.name).toBe('weather');
    expect(registry.get('missing')).toBeUndefined();
  });

  it('rejects a duplicate name', () => {
    const registry = new FunctionRegistry([fakeFunction('fake_one')]);
    expect(codeOf(() => registry.register(fakeFunction('fake_one')))).toBe('invalid_arguments');
  });

  it.each(['CamelCase', 'kebab-case', '1starts_with_digit', 'trailing_', 'double__underscore', '', 'a'.repeat(65)])(
    'rejects the name %j',
    (name) => {
      expect(codeOf(() => new FunctionRegistry().register(fakeFunction(name)))).toBe('invalid_arguments');
    },
  );

  it('describes functions with JSON Schema parameters', () => {
    const [description] = new FunctionRegistry([fakeFunction('fake_one')]).describe();
    expect(description).toMatchObject({
      name: 'fake_one',
      delivery: 'silent',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    });
  });
});
