import { randomUUID } from 'node:crypto';
import type { FunctionContext, VenusFunction } from '@venus/harness-functions';
import type { DelegationExecutor, DelegationRequest, WorkEvent } from '@venus/protocol';
import { VenusError } from '@venus/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

/** Knobs every executor takes; a fixture passes them to whatever runs the functions. */
export interface ExecutorContractOptions {
  concurrency?: number;
  progressFirstMs?: number;
  progressEveryMs?: number;
  requestTimeoutMs?: number;
  maxInFlightPerSession?: number;
}

export interface ExecutorFixture {
  executor: DelegationExecutor;
  /** Closes the executor and whatever runs its work, and removes what it stored. */
  close(): Promise<void>;
}

export type MakeExecutor = (
  functions: readonly VenusFunction[],
  options: ExecutorContractOptions,
) => Promise<ExecutorFixture>;

interface GatedRun {
  ctx: FunctionContext;
  topic: string;
  release(speech: string): void;
}

/**
 * A real function whose runs wait until the test releases them (or their signal aborts); it keeps
 * each run's context so a test can see the signal. Queries look like "gated <topic>".
 */
export function gatedFunction() {
  const runs: GatedRun[] = [];
  const waiters: (() => void)[] = [];
  const fn: VenusFunction<{ topic: string }> = {
    name: 'gated_task',
    description: 'Waits until the test lets it finish.',
    parameters: z.object({ topic: z.string().min(1) }),
    examples: ['gated task'],
    extract: (query) => {
      const match = /^gated (.+)$/.exec(query);
      return match ? { topic: match[1]! } : null;
    },
    run: ({ topic }, ctx) =>
      new Promise((resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        ctx.progress(`working on ${topic}`);
        runs.push({ ctx, topic, release: (speech) => resolve({ data: { topic }, speech }) });
        for (const wake of waiters.splice(0)) wake();
      }),
  };
  /** Resolves with the run of `topic` once it has started. */
  const started = async (topic: string): Promise<GatedRun> => {
    for (;;) {
      const run = runs.find((r) => r.topic === topic);
      if (run) return run;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { fn, runs, started };
}

/** A real function that answers at once: "echo <text>". */
export const echoFunction: VenusFunction<{ text: string }> = {
  name: 'echo_text',
  description: 'Says the text back.',
  parameters: z.object({ text: z.string().min(1) }),
  examples: ['echo hello'],
  extract: (query) => {
    const match = /^echo (.+)$/.exec(query);
    return match ? { text: match[1]! } : null;
  },
  run: async ({ text }) => ({ data: { echoed: text }, speech: `You said ${text}.` }),
};

function label(event: WorkEvent): string {
  return event.kind === 'state' ? event.state : event.kind;
}

function brief(event: WorkEvent): string {
  return `${event.workId}:${label(event)}`;
}

/**
 * The DelegationExecutor contract, run against every implementation (in-process, BullMQ): what a
 * session host may rely on whichever background loop it talks to.
 */
export function delegationExecutorContract(name: string, make: MakeExecutor): void {
  describe(`DelegationExecutor contract: ${name}`, () => {
    const fixtures: ExecutorFixture[] = [];
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((fixture) => fixture.close()));
    });

    async function setup(options: ExecutorContractOptions = {}) {
      const gated = gatedFunction();
      const fixture = await make([gated.fn, echoFunction], options);
      fixtures.push(fixture);
      const { executor } = fixture;
      const events: WorkEvent[] = [];
      const waiters = new Set<() => void>();
      executor.subscribe((event) => {
        events.push(event);
        for (const wake of [...waiters]) wake();
      });
      /** The first matching event, seen or to come; fails after a while with the events so far. */
      const waitFor = async (match: (event: WorkEvent) => boolean, timeoutMs = 10_000): Promise<WorkEvent> => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const seen = events.find(match);
          if (seen) return seen;
          const left = deadline - Date.now();
          if (left <= 0) throw new Error(`no matching event; got ${JSON.stringify(events.map(brief))}`);
          await new Promise<void>((resolve) => {
            const wake = () => {
              clearTimeout(timer);
              waiters.delete(wake);
              resolve();
            };
            const timer = setTimeout(wake, left);
            waiters.add(wake);
          });
        }
      };
      const of = (workId: string) => events.filter((event) => event.workId === workId);
      const sequence = (workId: string) => of(workId).map(label);
      const session = `s-${randomUUID().slice(0, 8)}`;
      let counter = 0;
      const request = (query: string, overrides: Partial<DelegationRequest> = {}): DelegationRequest => ({
        workId: `w-${randomUUID().slice(0, 8)}-${++counter}`,
        session,
        incarnation: 3,
        tenant: 'contract',
        query,
        evidenceCutoffSeq: 12,
        chunk: 4,
        createdAtMs: Date.now(),
        ...overrides,
      });
      const resultOf = (workId: string) => waitFor((e) => e.kind === 'result' && e.workId === workId);
      const stateOf = (workId: string, state: string) =>
        waitFor((e) => e.kind === 'state' && e.workId === workId && e.state === state);
      /** Runs an echo through the executor: events it emits before this result are already in. */
      const barrier = async (over: Partial<DelegationRequest> = {}) => {
        const req = request('echo barrier', over);
        await executor.submit(req);
        await resultOf(req.workId);
      };
      return { executor, gated, events, of, sequence, request, resultOf, stateOf, barrier, session };
    }

    it('resolves submit before the work finishes, then reports RUNNING and the result', async () => {
      const { executor, gated, sequence, request, resultOf, stateOf } = await setup();
      const req = request('gated alpha');
      await executor.submit(req);
      const run = await gated.started('alpha');
      await stateOf(req.workId, 'RUNNING');
      expect(sequence(req.workId)).not.toContain('result');
      run.release('Alpha is done.');
      const event = await resultOf(req.workId);
      expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'result']);
      expect(event).toMatchObject({
        kind: 'result',
        session: req.session,
        incarnation: 3,
        workId: req.workId,
        result: {
          workId: req.workId,
          session: req.session,
          incarnation: 3,
          ok: true,
          text: 'Alpha is done.',
          data: { topic: 'alpha' },
          functionName: 'gated_task',
          policy: 'when_idle',
        },
      });
      expect(run.ctx).toMatchObject({ session: req.session, workId: req.workId });
    });

    it('stamps every event with the session and incarnation of its request', async () => {
      const { executor, of, request, resultOf } = await setup();
      const a = request('echo one', { incarnation: 0 });
      const b = request('echo two', { session: `other-${randomUUID().slice(0, 6)}`, incarnation: 9 });
      await Promise.all([executor.submit(a), executor.submit(b)]);
      await Promise.all([resultOf(a.workId), resultOf(b.workId)]);
      for (const req of [a, b]) {
        expect(of(req.workId).length).toBeGreaterThanOrEqual(3);
        for (const event of of(req.workId)) {
          expect(event).toMatchObject({ session: req.session, incarnation: req.incarnation, workId: req.workId });
        }
      }
    });

    it('fails a query no function fits with FAILED and an ok:false result', async () => {
      const { executor, events, sequence, request, resultOf } = await setup();
      const req = request('tell me a joke about ducks');
      await executor.submit(req);
      const event = await resultOf(req.workId);
      expect(sequence(req.workId)).toEqual(['QUEUED', 'FAILED', 'result']);
      expect(events.find((e) => e.kind === 'state' && e.workId === req.workId && e.state === 'FAILED')).toMatchObject({
        reason: expect.stringMatching(/^function_not_found/),
      });
      expect(event).toMatchObject({
        result: { ok: false, text: "Sorry, I couldn't get that: I don't have a way to do that yet." },
      });
    });

    it('cancels running work: aborts the function, CANCELLING then CANCELLED, never a result', async () => {
      const { executor, gated, sequence, request, stateOf, barrier } = await setup();
      const req = request('gated beta');
      await executor.submit(req);
      const run = await gated.started('beta');
      await stateOf(req.workId, 'RUNNING');
      await executor.cancel(req.workId, 'user changed their mind');
      await stateOf(req.workId, 'CANCELLED');
      expect(run.ctx.signal.aborted).toBe(true);
      run.release('too late');
      await barrier();
      expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'CANCELLING', 'CANCELLED']);
      await expect(executor.cancel(req.workId, 'again')).rejects.toMatchObject({ code: 'work_not_found' });
    });

    it('cancels work still waiting for a slot without ever running it', async () => {
      const { executor, gated, sequence, request, stateOf, resultOf } = await setup({ concurrency: 1 });
      const busy = request('gated gamma');
      const waiting = request('gated delta');
      await executor.submit(busy);
      const run = await gated.started('gamma');
      await executor.submit(waiting);
      await executor.cancel(waiting.workId, 'no longer needed');
      await stateOf(waiting.workId, 'CANCELLED');
      run.release('Gamma done.');
      await resultOf(busy.workId);
      expect(sequence(waiting.workId)).toEqual(['QUEUED', 'CANCELLING', 'CANCELLED']);
      expect(gated.runs.map((r) => r.topic)).toEqual(['gamma']);
    });

    it('refuses to cancel work it does not know', async () => {
      const { executor } = await setup();
      const refusal = executor.cancel(`missing-${randomUUID()}`, 'whatever');
      await expect(refusal).rejects.toBeInstanceOf(VenusError);
      await expect(refusal).rejects.toMatchObject({ code: 'work_not_found' });
    });

    it('limits work in flight per session, and frees a slot when work ends', async () => {
      const { executor, gated, request, stateOf, resultOf } = await setup({ maxInFlightPerSession: 3 });
      const held = ['k1', 'k2', 'k3'].map((topic) => request(`gated ${topic}`));
      for (const req of held) await executor.submit(req);
      const over = executor.submit(request('gated k4'));
      await expect(over).rejects.toMatchObject({ code: 'delegate_limit_reached' });
      // Another session is not affected.
      const elsewhere = request('echo elsewhere', { session: `s-other-${randomUUID().slice(0, 6)}` });
      await executor.submit(elsewhere);
      await resultOf(elsewhere.workId);
      await executor.cancel(held[0]!.workId, 'make room');
      await stateOf(held[0]!.workId, 'CANCELLED');
      (await gated.started('k2')).release('K2 done.');
      await resultOf(held[1]!.workId);
      const next = [request('echo after one'), request('echo after two')];
      for (const req of next) await executor.submit(req);
      await Promise.all(next.map((req) => resultOf(req.workId)));
      (await gated.started('k3')).release('K3 done.');
      await resultOf(held[2]!.workId);
    });

    it('treats a resubmitted work id as the same work: one run, one result', async () => {
      const { executor, gated, of, request, resultOf, barrier } = await setup();
      const req = request('gated epsilon');
      await Promise.all([executor.submit(req), executor.submit({ ...req })]);
      const run = await gated.started('epsilon');
      await executor.submit({ ...req });
      run.release('Epsilon done.');
      await resultOf(req.workId);
      await executor.submit({ ...req });
      await barrier();
      expect(gated.runs.filter((r) => r.topic === 'epsilon')).toHaveLength(1);
      expect(of(req.workId).filter((e) => e.kind === 'result')).toHaveLength(1);
      expect(of(req.workId).filter((e) => e.kind === 'state' && e.state === 'RUNNING')).toHaveLength(1);
    });

    it('sends progress notices on schedule with what the function said it is doing', async () => {
      const { executor, gated, events, of, request, resultOf, barrier } = await setup({
        progressFirstMs: 30,
        progressEveryMs: 30,
      });
      const req = request('gated zeta');
      await executor.submit(req);
      const run = await gated.started('zeta');
      const progress = () => of(req.workId).filter((e) => e.kind === 'progress');
      await expect.poll(() => progress().length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      run.release('Zeta done.');
      await resultOf(req.workId);
      const atResult = progress().length;
      await barrier();
      await barrier();
      expect(progress().length).toBe(atResult);
      expect(progress()[0]).toMatchObject({
        session: req.session,
        incarnation: 3,
        message: 'working on zeta',
        elapsedMs: expect.any(Number),
      });
      const labels = of(req.workId).map(label);
      expect(labels.indexOf('RUNNING')).toBeLessThan(labels.indexOf('progress'));
      expect(labels.at(-1)).toBe('result');
      expect(events.length).toBeGreaterThan(0);
    });

    it('times out work past the request timeout with an apology', async () => {
      const { executor, gated, sequence, request, resultOf } = await setup({ requestTimeoutMs: 300 });
      const req = request('gated eta');
      await executor.submit(req);
      const run = await gated.started('eta');
      const event = await resultOf(req.workId);
      expect(run.ctx.signal.aborted).toBe(true);
      expect(sequence(req.workId)).toEqual(['QUEUED', 'RUNNING', 'FAILED', 'result']);
      expect(event).toMatchObject({ result: { ok: false, text: "Sorry, I couldn't get that: it took too long." } });
    });
  });
}
