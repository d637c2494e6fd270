import { defineConfig } from 'vitest/config';

/**
 * `npm run fuzz`: the protocol fuzzing run (test/*.fuzz.ts), kept out of `npm test` until its
 * post-barrage liveness probe is stable on a loaded machine (two runs of it failed there). Same
 * real Redis setup as the suite; set FUZZ_SEED to replay a run.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.fuzz.ts'],
    globalSetup: ['test/setup/redis-server.ts'],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
