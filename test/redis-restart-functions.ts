import { existsSync } from 'node:fs';
import { abortableSleep, type VenusFunction } from '@venus/harness-functions';
import { z } from 'zod';

/**
 * The function the Redis-restart test loads into its real harness (VENUS_HARNESS_FUNCTIONS_MODULE):
 * the weather requests the reference model delegates route to it (its vocabulary covers their
 * whole query, so it outranks the built-in weather), and each run holds until the file named by
 * RESTART_GATE exists. The test opens the gate after Redis is back, so every delegation is queued
 * or running across the restart whatever the machine's speed.
 */
const heldLookup: VenusFunction<{ query: string }> = {
  name: 'held_lookup',
  description: 'Looks up the weather right now, once the test lets it.',
  parameters: z.object({ query: z.string().min(1) }),
  examples: ['What is the weather in Paris right now?'],
  keywords: ['weather', 'paris', 'right', 'now'],
  extract: (query) => ({ query }),
  run: async ({ query }, ctx) => {
    const gate = process.env.RESTART_GATE;
    if (!gate) throw new Error('RESTART_GATE is not set');
    // A wait for the test's release (a file, which a restart of Redis does not touch).
    while (!existsSync(gate)) await abortableSleep(20, ctx.signal);
    return { data: { query }, speech: `Here is what I found for: ${query}` };
  },
};

export default [heldLookup];
