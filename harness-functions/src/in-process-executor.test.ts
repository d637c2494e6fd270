import { type DelegationRequest, VenusError, type WorkEvent } from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBuiltinFunctions } from './builtins/builtin-functions.ts';
import type { FunctionContext, VenusFunction } from './function-definition.ts';
import { FunctionRegistry } from './function-registry.ts';
import { InProcessExecutor, type InProcessExecutorOptions } from './in-process-executor.ts';

/** A fake function whose runs the test releases by hand; it records every context it was given. */
function fakeGatedFunction(name = 'fake_gated') {
  const runs: { ctx: FunctionContext; release: (speech: string) => void }[] = [];
  const fn: VenusFunction<{ topic: string }> = {
    name,
    description: 'Fake work that waits for the test to release it.',
    parameters: z.object({ topic: z.string() }),
    delivery: 'interrupt',
    examples: ['gated task'],
    extract: (query) => (query.includes('gated') ? { topic: query } : null),
    run: (_args, ctx) =>
      new Promise((resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        runs.push({ ctx, release: (speech) => resolve({ data: { released: true }, speech }) });
      }),
  };
  return { fn, runs };
}

const fakeThrowing: VenusFunction<{ q: string }> = {
  name: 'fake_throwing',
  description: 'Fake work that breaks.',
  parameters: z.object({ q: z.string() }),
  examples: ['broken task'],
  extract: (query) => (query.includes('broken') ? { q: query } : null),
  run: async () => {
    throw new TypeError('cannot read properties of undefined');
  },
};

let nextId = 0;
function request(query: string, overrides: Partial<DelegationRequest> = {}): DelegationRequest {
  nextId++;
  return {
    workId: `work-${nextId}`,
    session: 'session-a',
    incarnation: 1,
    tenant: 'default',
    query,
    evidenceCutoffSeq: 10,
    chunk: 3,
    createdAtMs: 1_000,
    ...overrides,
  };
}

const executors: InProcessExecutor[] = [];
afterEach(async () => {
  await Promise.all(executors.splice(0).map((executor) => executor.close()));
});

function setup(options: Partial<InProcessExecutorOptions> = {}) {
  const gated = fakeGatedFunction();
  const registry = new FunctionRegistry([...createBuiltinFunctions({ latencyMs: 5 }), gated.fn, fakeThrowing]);
  const executor = new InProcessExecutor({ registry, now: () => 50_000, ...options });
  executors.push(executor);
  const events: WorkEvent[] = [];
  executor.subscribe((event) => events.push(event));
  /** Resolves with the first event (already seen or future) that matches. */
  const waitFor = (match: (event: WorkEvent) => boolean): Promise<WorkEvent> => {
    const seen = events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const stop = executor.subscribe((event) => {
        if (!match(event)) return;
        stop();
        resolve(event);
      });
    });
  };
  const sequence = (workId: string) =>
    events
      .filter((event) => event.workId === workId)
      .map((event) => (event.kind === 'state' ? event.state : event.kind === 'result' ? 'result' : 'progress'));
  return { executor, events, gated, waitFor, sequence };
}

const isResult = (workId: string) => (event: WorkEvent) => event.kind === 'result' && event.workId === workId;
const isState = (workId: string, state: string) => (event: WorkEvent) =>
  event.kind === 'state' && event.workId === workId && event.state === state;

describe('InProcessExecutor', () => {
  it('goes QUEUED -> RUNNING -> result, with QUEUED seen before submit resolves', async () => {
    const { executor, events, waitFor, sequence } = setup({ resultTtlMs: 1_000 });
    const req = request("what's the weather in Paris");
    const submitted = executor.submit(req);
    expect(sequence(req.workId)).toEqual(['QUEUED']);
    await submitted;
    const event = await waitFor(isResult(req.workId));
    expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'result']);
    expect(events.find(isState(req.workId, 'RUNNING'))).toMatchObject({ functionName: 'weather', incarnation: 1 });
    expect(event).toMatchObject({
      session: 'session-a',
      incarnation: 1,
      result: {
        workId: req.workId,
        ok: true,
        functionName: 'weather',
        text: "It's 18 degrees and partly cloudy in Paris.",
        policy: 'when_idle',
        completedAtMs: 50_000,
        expiresAtMs: 51_000,
      },
    });
  });

  it('takes the policy from the request, then the function, then the default', async () => {
    const { executor, gated, waitFor } = setup({ defaultPolicy: 'silent' });
    const fromRequest = request('what is 2 + 2', { policy: 'skip_if_busy' });
    const fromDefault = request('what is 3 + 3');
    const fromFunction = request('gated task');
    await executor.submit(fromRequest);
    await executor.submit(fromDefault);
    await executor.submit(fromFunction);
    await waitFor(isState(fromFunction.workId, 'RUNNING'));
    gated.runs[0]!.release('Released.');
    const policies = await Promise.all(
      [fromRequest, fromDefault, fromFunction].map(async (req) => {
        const event = await waitFor(isResult(req.workId));
        return event.kind === 'result' ? event.result.policy : undefined;
      }),
    );
    expect(policies).toEqual(['skip_if_busy', 'silent', 'interrupt']);
  });

  it('fails with an apology when no function fits', async () => {
    const { executor, events, waitFor, sequence } = setup();
    const req = request('tell me a joke');
    await executor.submit(req);
    const event = await waitFor(isResult(req.workId));
    expect(sequence(req.workId)).toEqual(['QUEUED', 'FAILED', 'result']);
    expect(events.find(isState(req.workId, 'FAILED'))).toMatchObject({
      reason: expect.stringMatching(/^function_not_found/),
    });
    expect(event).toMatchObject({
      result: {
        ok: false,
        text: "Sorry, I couldn't get that: I don't have a way to do that yet.",
        policy: 'when_idle',
      },
    });
  });

  it('fails with the function reason, or a generic one for a bug', async () => {
    const { executor, events, waitFor, sequence } = setup();
    const unknownCity = request("what's the weather in Atlantis");
    const broken = request('broken task');
    await executor.submit(unknownCity);
    await executor.submit(broken);
    const unknownResult = await waitFor(isResult(unknownCity.workId));
    const brokenResult = await waitFor(isResult(broken.workId));
    expect(sequence(unknownCity.workId)).toEqual(['QUEUED', 'RUNNING', 'FAILED', 'result']);
    expect(unknownResult).toMatchObject({
      result: {
        ok: false,
        functionName: 'weather',
        text: "Sorry, I couldn't get that: I don't have weather for Atlantis.",
      },
    });
    expect(brokenResult).toMatchObject({
      result: { ok: false, text: "Sorry, I couldn't get that: something went wrong." },
    });
    expect(events.find(isState(broken.workId, 'FAILED'))).toMatchObject({
      reason: 'function_failed: cannot read properties of undefined',
      functionName: 'fake_throwing',
    });
  });

  it('times out, aborting the function, and apologizes', async () => {
    const { executor, gated, waitFor, sequence } = setup({ requestTimeoutMs: 30 });
    const req = request('gated task');
    await executor.submit(req);
    const event = await waitFor(isResult(req.workId));
    expect(gated.runs[0]!.ctx.signal.aborted).toBe(true);
    expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'FAILED', 'result']);
    expect(event).toMatchObject({ result: { ok: false, text: "Sorry, I couldn't get that: it took too long." } });
  });

  it('cancels running work: aborts its signal, CANCELLING -> CANCELLED, and never a result', async () => {
    const { executor, gated, waitFor, sequence, events } = setup();
    const req = request('gated task');
    await executor.submit(req);
    await waitFor(isState(req.workId, 'RUNNING'));
    await executor.cancel(req.workId, 'user changed their mind');
    expect(gated.runs[0]!.ctx.signal.aborted).toBe(true);
    expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'CANCELLING', 'CANCELLED']);
    expect(events.find(isState(req.workId, 'CANCELLED'))).toMatchObject({ reason: 'user changed their mind' });
    // A late release from the function must not turn into a result.
    gated.runs[0]!.release('too late');
    const later = request('what is 1 + 1');
    await executor.submit(later);
    await waitFor(isResult(later.workId));
    expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'CANCELLING', 'CANCELLED']);
    await expect(executor.cancel(req.workId, 'again')).rejects.toMatchObject({ code: 'work_not_found' });
  });

  it('cancels queued work before it runs', async () => {
    const { executor, gated, waitFor, sequence } = setup({ concurrency: 1 });
    const first = request('gated task');
    const second = request('gated task two');
    await executor.submit(first);
    await executor.submit(second);
    await waitFor(isState(first.workId, 'RUNNING'));
    await executor.cancel(second.workId, 'not needed');
    gated.runs[0]!.release('First done.');
    await waitFor(isResult(first.workId));
    expect(sequence(second.workId)).toEqual(['QUEUED', 'CANCELLING', 'CANCELLED']);
    expect(gated.runs).toHaveLength(1);
  });

  it('runs queued work when a slot frees up', async () => {
    const { executor, gated, waitFor, events } = setup({ concurrency: 1 });
    const first = request('gated task');
    const second = request('what is 6 * 7');
    await executor.submit(first);
    await executor.submit(second);
    await waitFor(isState(first.workId, 'RUNNING'));
    expect(events.some(isState(second.workId, 'RUNNING'))).toBe(false);
    gated.runs[0]!.release('First done.');
    const event = await waitFor(isResult(second.workId));
    expect(event).toMatchObject({ result: { ok: true, text: '6 times 7 is 42.' } });
    expect(events.findIndex(isResult(first.workId))).toBeLessThan(events.findIndex(isState(second.workId, 'RUNNING')));
  });

  it('enforces the per-session in-flight limit', async () => {
    const { executor, waitFor } = setup({ maxInFlightPerSession: 2 });
    const first = request('gated task');
    await executor.submit(first);
    await executor.submit(request('gated task'));
    await expect(executor.submit(request('gated task'))).rejects.toMatchObject({ code: 'delegate_limit_reached' });
    await executor.submit(request('gated task', { session: 'session-b' }));
    await waitFor(isState(first.workId, 'RUNNING'));
    await executor.cancel(first.workId, 'make room');
    await executor.submit(request('gated task'));
  });

  it('sends progress notices on schedule while running', async () => {
    const { executor, gated, waitFor, sequence, events } = setup({ progressFirstMs: 5, progressEveryMs: 5 });
    const req = request('gated task');
    await executor.submit(req);
    await waitFor(isState(req.workId, 'RUNNING'));
    gated.runs[0]!.ctx.progress('Halfway there');
    let seen = 0;
    await waitFor((event) => event.kind === 'progress' && ++seen === 2);
    gated.runs[0]!.release('Done.');
    await waitFor(isResult(req.workId));
    const progress = events.filter((event) => event.kind === 'progress');
    expect(progress[0]).toMatchObject({ workId: req.workId, message: 'Halfway there', elapsedMs: 0 });
    const order = sequence(req.workId);
    expect(order.slice(0, 2)).toEqual(['QUEUED', 'RUNNING']);
    expect(order.at(-1)).toBe('result');
    expect(order.slice(2, -1).every((kind) => kind === 'progress')).toBe(true);
    expect(order.length).toBeGreaterThanOrEqual(5);
  });

  it('keeps going when a listener throws', async () => {
    const listenerErrors: unknown[] = [];
    const { executor, waitFor, sequence } = setup({ onListenerError: (error) => listenerErrors.push(error) });
    executor.subscribe(() => {
      throw new Error('listener bug');
    });
    const req = request('convert 5 miles to km');
    await executor.submit(req);
    await waitFor(isResult(req.workId));
    expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'result']);
    expect(listenerErrors.length).toBe(3);
  });

  it('ignores a duplicate workId and stops sending to unsubscribed listeners', async () => {
    const { executor, waitFor, sequence } = setup();
    const quiet: WorkEvent[] = [];
    executor.subscribe((event) => quiet.push(event))();
    const req = request('what is 1 + 1');
    await executor.submit(req);
    await executor.submit(req);
    await waitFor(isResult(req.workId));
    await executor.submit(req);
    expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'result']);
    expect(quiet).toEqual([]);
  });

  it('rejects invalid requests and unknown work', async () => {
    const { executor } = setup();
    const invalid = { ...request('what is 1 + 1'), query: '   ' };
    await expect(executor.submit(invalid)).rejects.toMatchObject({ code: 'invalid_event' });
    await expect(executor.cancel('nope', 'why')).rejects.toBeInstanceOf(VenusError);
    await expect(executor.cancel('nope', 'why')).rejects.toMatchObject({ code: 'work_not_found' });
  });

  it('close() aborts running work and refuses new work', async () => {
    const { executor, gated, waitFor } = setup();
    const req = request('gated task');
    await executor.submit(req);
    await waitFor(isState(req.workId, 'RUNNING'));
    await executor.close();
    expect(gated.runs[0]!.ctx.signal.aborted).toBe(true);
    await expect(executor.submit(request('what is 1 + 1'))).rejects.toMatchObject({ code: 'session_closed' });
  });

  it('honours the abort even when a function ignores its signal', async () => {
    const fakeStubborn: VenusFunction<{ q: string }> = {
      name: 'fake_stubborn',
      description: 'Fake work that never looks at its signal.',
      parameters: z.object({ q: z.string() }),
      examples: ['stubborn task'],
      extract: (query) => ({ q: query }),
      run: () => new Promise(() => {}),
    };
    const executor = new InProcessExecutor({ registry: new FunctionRegistry([fakeStubborn]), requestTimeoutMs: 20 });
    executors.push(executor);
    const results: WorkEvent[] = [];
    const done = new Promise<void>((resolve) =>
      executor.subscribe((event) => {
        if (event.kind === 'result') {
          results.push(event);
          resolve();
        }
      }),
    );
    await executor.submit(request('stubborn task'));
    await done;
    expect(results[0]).toMatchObject({ result: { ok: false, text: "Sorry, I couldn't get that: it took too long." } });
  });
});
