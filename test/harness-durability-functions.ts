import { abortableSleep, type VenusFunction } from '@venus/harness-functions';
import { z } from 'zod';

/**
 * Functions the durability tests load into real harness processes (HARNESS_FUNCTIONS_MODULE).
 * `slow_steps` ("slow <label> <steps>") sleeps 100 ms per step and reports which process runs it,
 * so a test can kill exactly that process mid-job.
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

export default [slowSteps];
