import { defineConfig } from 'vitest/config';

/**
 * The reliability suite (`npm run test:faults`): real worker processes, a real
 * Postgres and the sandbox's faults. Files run one at a time because scenarios
 * spawn several processes and measure timings (takeover, SIGTERM) that a second
 * concurrent scenario on a 2-core machine would distort.
 */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    globalSetup: ['test/support/faults/global-setup.ts'],
  },
});
