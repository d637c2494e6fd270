import type { ClientFunction, DelegationRequest } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { createBuiltinFunctions } from './builtins/builtin-functions.ts';
import { clientFunctions, isClientFunction } from './client-functions.ts';
import { DelegationRunner } from './delegation-runner.ts';
import { FunctionRegistry } from './function-registry.ts';

const lookupOrder: ClientFunction = {
  name: 'lookup_order',
  description: 'Looks up where a customer order is: its shipping status and delivery date.',
  parameters: {
    type: 'object',
    properties: { order_id: { type: 'string', description: 'The order number' } },
    required: ['order_id'],
    additionalProperties: false,
  },
};

const runner = new DelegationRunner({ registry: new FunctionRegistry(createBuiltinFunctions({ latencyMs: 0 })) });

function request(query: string, clientFns: ClientFunction[] = [lookupOrder]): DelegationRequest {
  return {
    workId: 'work_1',
    session: 'sess_1',
    incarnation: 0,
    tenant: 'default',
    query,
    evidenceCutoffSeq: 0,
    chunk: 0,
    createdAtMs: 0,
    clientFunctions: clientFns,
  };
}

describe('client functions in the planner', () => {
  it('a client function is picked by its description, its arguments extracted per its schema, and not run', async () => {
    const planned: string[] = [];
    const outcome = await runner.run(request('Where is my order 4417?'), {
      signal: new AbortController().signal,
      onPlanned: (name) => planned.push(name),
    });
    expect(outcome.ok).toBe(true);
    expect(planned).toEqual(['lookup_order']);
    expect(outcome.result.clientCall).toEqual({ name: 'lookup_order', arguments: '{"order_id":"4417"}' });
    expect(outcome.result.functionName).toBe('lookup_order');
  });

  it('built-ins still win their own requests with client functions present', async () => {
    const outcome = await runner.run(request("What's the weather in Paris?"), { signal: new AbortController().signal });
    expect(outcome.functionName).toBe('weather');
    expect(outcome.result.clientCall).toBeUndefined();
  });

  it('a request no function fits is an apology to speak', async () => {
    const outcome = await runner.run(request('Sing me a song about the sea'), { signal: new AbortController().signal });
    expect(outcome.ok).toBe(false);
    expect(outcome.result.text).toMatch(/^Sorry/);
    expect(outcome.result.clientCall).toBeUndefined();
  });

  it('leaves out client functions that shadow the harness or whose schema the planner cannot use', () => {
    const own = createBuiltinFunctions({ latencyMs: 0 });
    const nested = {
      ...lookupOrder,
      name: 'nested',
      parameters: { ...lookupOrder.parameters, properties: { a: { type: 'object' } } },
    };
    const fns = clientFunctions([{ ...lookupOrder, name: 'weather' }, nested, lookupOrder], own);
    expect(fns.map((fn) => fn.name)).toEqual(['lookup_order']);
    expect(fns.every(isClientFunction)).toBe(true);
    expect(own.some(isClientFunction)).toBe(false);
  });
});
