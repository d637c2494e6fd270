import { randomUUID } from 'node:crypto';
import {
  createWorkStatus,
  DefaultOralizer,
  type Evidence,
  type FunctionContext,
  type OralizeInput,
  type Oralizer,
  type PlanContext,
  type Planner,
  RouterPlanner,
  type VenusFunction,
} from '@venus/harness-functions';
import type { DelegationExecutor, DelegationRequest, TimelineEvent, TimelineStore, WorkEvent } from '@venus/protocol';
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
  planner?: Planner;
  oralizer?: Oralizer;
}

export interface ExecutorFixture {
  executor: DelegationExecutor;
  /** The real store whose timelines the executor reads evidence from; the test appends to it. */
  timeline: TimelineStore;
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

/** A real function that answers from the evidence it was given: "evidence probe". */
export function evidenceProbe() {
  const seen: (Evidence | undefined)[] = [];
  const fn: VenusFunction<Record<string, never>> = {
    name: 'evidence_probe',
    description: 'Says what the conversation held before it was asked.',
    parameters: z.object({}).strict() as z.ZodType<Record<string, never>>,
    examples: ['evidence probe'],
    extract: (query) => (query === 'evidence probe' ? {} : null),
    run: async (_args, ctx) => {
      seen.push(ctx.evidence);
      return { data: {}, speech: `I saw ${ctx.evidence?.transcript.length ?? 0} lines.` };
    },
  };
  return { fn, seen };
}

/** The router and the default oralizer, each remembering the evidence it was handed. */
export function recordingPlanAndOralize() {
  const planned: (Evidence | undefined)[] = [];
  const oralized: (Evidence | undefined)[] = [];
  const router = new RouterPlanner();
  const wording = new DefaultOralizer();
  const planner: Planner = {
    plan(query: string, functions: readonly VenusFunction[], context?: PlanContext) {
      planned.push(context?.evidence);
      return router.plan(query, functions);
    },
  };
  const oralizer: Oralizer = {
    oralize(input: OralizeInput) {
      oralized.push(input.evidence);
      return wording.oralize(input);
    },
  };
  return { planner, oralizer, planned, oralized };
}

/** A short conversation: the typed question, a reply played to its end, a follow-up. */
function conversation(session: string): TimelineEvent[] {
  const at = (seq: number) => ({ session, seq, chunk: seq, atMs: seq * 160 });
  return [
    { ...at(1), stream: 'user', type: 'user.text', data: { inputSeq: 0, itemId: 'i1', text: "What's on in Paris?" } },
    { ...at(2), stream: 'assistant', type: 'assistant.utterance', data: { utteranceId: 'u1', phase: 'started' } },
    { ...at(3), stream: 'assistant', type: 'assistant.text', data: { utteranceId: 'u1', delta: 'A jazz festival.' } },
    {
      ...at(4),
      stream: 'assistant',
      type: 'assistant.utterance',
      data: { utteranceId: 'u1', phase: 'finished', reason: 'completed' },
    },
    { ...at(5), stream: 'user', type: 'user.text', data: { inputSeq: 1, itemId: 'i2', text: 'Book it for Friday.' } },
    // Past the cutoff (5): typed after the delegate tag opened.
    { ...at(6), stream: 'user', type: 'user.text', data: { inputSeq: 2, itemId: 'i3', text: 'No, make it Sunday.' } },
  ];
}

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
      const probe = evidenceProbe();
      const fixture = await make([gated.fn, echoFunction, probe.fn, createWorkStatus()], options);
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
        // An empty timeline by default: the evidence test appends its own and sets its cutoff.
        evidenceCutoffSeq: 0,
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
      const { timeline } = fixture;
      return { executor, gated, probe, timeline, events, of, sequence, request, resultOf, stateOf, barrier, session };
    }

    it('gives the work its evidence up to the cutoff and never an event after it', async () => {
      const recording = recordingPlanAndOralize();
      const { executor, probe, timeline, request, resultOf, session } = await setup(recording);
      await timeline.append(conversation(session));
      const req = request('evidence probe', { evidenceCutoffSeq: 5 });
      await executor.submit(req);
      const event = await resultOf(req.workId);
      expect(event).toMatchObject({ result: { ok: true, text: 'I saw 3 lines.' } });
      const [evidence] = probe.seen;
      expect(evidence).toMatchObject({ session, cutoffSeq: 5, complete: true });
      expect(evidence?.transcript.map((l) => [l.speaker, l.source, l.text])).toEqual([
        ['user', 'typed', "What's on in Paris?"],
        ['assistant', 'spoken', 'A jazz festival.'],
        ['user', 'typed', 'Book it for Friday.'],
      ]);
      expect(JSON.stringify(evidence)).not.toContain('Sunday');
      // The planner and the oralizer were handed the same evidence.
      expect(recording.planned).toEqual([evidence]);
      expect(recording.oralized).toEqual([evidence]);
    });

    it('carries the work snapshot to the function unchanged: work_status answers from it', async () => {
      const { executor, request, resultOf } = await setup();
      const req = request('What is the status of my pending requests?', {
        workSnapshot: [
          { workId: 'w-a', query: 'What is the weather in Paris?', state: 'RUNNING', ageMs: 7_400 },
          { workId: 'w-b', query: 'time in Tokyo', state: 'QUEUED', ageMs: 300 },
          { workId: 'w-c', query: 'old question', state: 'DELIVERED', ageMs: 90_000, functionName: 'weather' },
        ],
      });
      await executor.submit(req);
      expect(await resultOf(req.workId)).toMatchObject({
        result: {
          ok: true,
          functionName: 'work_status',
          text: '"What is the weather in Paris?" is still running, 7 seconds so far. "time in Tokyo" is waiting to start.',
          data: { pending: 2 },
        },
      });
    });

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
