import type { VenusFunction } from '@venus/harness-functions';
import { z } from 'zod';

/**
 * A real function for tests whose runs block until the test releases them: every weather, time or
 * calculation delegation of the reference model routes to it.
 */
export function createGatedLookup(): { fn: VenusFunction; release(): void; started: string[] } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const started: string[] = [];
  const fn: VenusFunction<{ query: string }> = {
    name: 'gated_lookup',
    description: 'Looks up the weather, the time or a calculation (held until the test releases it).',
    parameters: z.object({ query: z.string() }),
    examples: ['What is the weather in Paris right now?', 'What time is it in Tokyo?', 'convert 5 miles to km'],
    keywords: ['weather', 'time', 'convert', 'calculate'],
    extract: (query) => ({ query }),
    async run(args, ctx) {
      started.push(ctx.workId);
      await new Promise<void>((resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        gate.then(resolve, reject);
      });
      return { data: { query: args.query }, speech: `Here is the answer to: ${args.query}` };
    },
  };
  return { fn: fn as unknown as VenusFunction, release: open, started };
}
