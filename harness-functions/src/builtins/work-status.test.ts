import type { WorkSnapshotEntry } from '@venus/protocol';
import { describe, expect, it } from 'vitest';
import { DelegationRunner } from '../delegation-runner.ts';
import { FunctionRegistry } from '../function-registry.ts';
import { createBuiltinFunctions } from './builtin-functions.ts';
import { describeWorkStatus } from './work-status.ts';

const entry = (over: Partial<WorkSnapshotEntry>): WorkSnapshotEntry => ({
  workId: 'w1',
  query: 'What is the weather in Paris?',
  state: 'RUNNING',
  ageMs: 4_200,
  ...over,
});

describe('work_status', () => {
  it('says one sentence per pending work, in the order given', () => {
    const { text, pending } = describeWorkStatus([
      entry({}),
      entry({ workId: 'w2', query: 'time in Tokyo', state: 'QUEUED', ageMs: 100 }),
      entry({ workId: 'w3', query: 'convert 5 miles', state: 'COMPLETED' }),
      entry({ workId: 'w4', query: 'old', state: 'DELIVERED' }),
      entry({ workId: 'w5', query: 'failed one', state: 'FAILED' }),
      entry({ workId: 'w6', query: 'earlier status', state: 'RUNNING', functionName: 'work_status' }),
    ]);
    expect(text).toBe(
      '"What is the weather in Paris?" is still running, 4 seconds so far. "time in Tokyo" is waiting to start. ' +
        '"convert 5 miles" is done, and I will tell you in a moment.',
    );
    expect(pending).toBe(3);
  });

  it('says nothing is pending when nothing is', () => {
    expect(describeWorkStatus([entry({ state: 'DELIVERED' })]).text).toBe('Nothing is pending right now.');
    expect(describeWorkStatus([]).text).toBe('Nothing is pending right now.');
  });

  it('is planned and answered from the request snapshot through the runner', async () => {
    const runner = new DelegationRunner({ registry: new FunctionRegistry(createBuiltinFunctions({ latencyMs: 0 })) });
    const request = {
      workId: 'status-1',
      session: 's',
      incarnation: 0,
      tenant: 'default',
      query: 'What is the status of my pending requests?',
      evidenceCutoffSeq: 0,
      chunk: 0,
      createdAtMs: 0,
    };
    const answered = await runner.run(
      { ...request, workSnapshot: [entry({ ageMs: 12_000 })] },
      { signal: new AbortController().signal },
    );
    expect(answered).toMatchObject({ ok: true, functionName: 'work_status' });
    expect(answered.result.text).toBe('"What is the weather in Paris?" is still running, 12 seconds so far.');

    // Without a snapshot it cannot know, and says so rather than claiming nothing is pending.
    const blind = await runner.run(request, { signal: new AbortController().signal });
    expect(blind).toMatchObject({ ok: false, functionName: 'work_status' });
    expect(blind.result.text).toMatch(/can't see your other requests/);
  });
});
