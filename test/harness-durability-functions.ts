import { existsSync } from 'node:fs';
import { abortableSleep, type VenusFunction } from '@venus/harness-functions';
import { z } from 'zod';

/**
 * Functions the durability tests load into real harness processes (HARNESS_FUNCTIONS_MODULE).
 * `slow_steps` ("slow <label> <steps>") sleeps 100 ms per step and reports which process runs it,
 * so a test can kill exactly that process mid-job. `gated_job` ("gated <label>") reports which
 * process runs it, then holds until the test creates the file named by DURABILITY_GATE: the
 * cross-process form of test/support/gated-function.ts, so a kill always lands mid-job.
 */
const slowSteps: VenusFunction<{ label: string; steps: number }> = {
  name: 'slow_steps',
  description: 'Works through a number of slow steps.',
  parameters: z.object({ label: z.string().min(1), steps: z.number().int().min(1).max(600) }),
  examples: ['slow task 10'],
  extract: (query) => {
    const match = /^slow (\S+) (\d+)$/.exec(query);
    return match ? { label: match[1]!, steps: Number(match[2]) } : null;
  },
  run: async ({ label, steps }, ctx) => {
    for (let step = 1; step <= steps; step++) {
      ctx.progress(`pid ${process.pid} step ${step}`);
      await abortableSleep(100, ctx.signal);
    }
    return { data: { label, pid: process.pid }, speech: `Finished ${label}.` };
  },
};

const gatedJob: VenusFunction<{ label: string }> = {
  name: 'gated_job',
  description: 'Holds until the test opens its gate.',
  parameters: z.object({ label: z.string().min(1) }),
  examples: ['gated task'],
  extract: (query) => {
    const match = /^gated (\S+)$/.exec(query);
    return match ? { label: match[1]! } : null;
  },
  run: async ({ label }, ctx) => {
    const gate = process.env.DURABILITY_GATE;
    if (!gate) throw new Error('DURABILITY_GATE is not set');
    ctx.progress(`pid ${process.pid} holding`);
    // A wait for the test's release (a file survives the kills of Redis and of this process).
    while (!existsSync(gate)) await abortableSleep(20, ctx.signal);
    return { data: { label, pid: process.pid }, speech: `Finished ${label}.` };
  },
};

export default [slowSteps, gatedJob];
