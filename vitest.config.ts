import { randomBytes } from 'node:crypto';
import { defineConfig } from 'vitest/config';

// this run's id, new for every vitest (a vitest a test starts gets its own): test databases and roles
// carry it, and test/support/global-setup.ts's teardown removes what carries it (README, "Tests")
const runId = randomBytes(4).toString('hex');
process.env.INTAKE_SYNC_TEST_RUN = runId;

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/faults/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // files run in parallel workers; each test file owns its own database
    pool: 'forks',
    env: { INTAKE_SYNC_TEST_RUN: runId },
    // ends the run's leftover processes and drops its databases and roles, Ctrl-C included
    globalSetup: ['test/support/global-setup.ts'],
    // the default report, and a line at once and every 10 s (the first files take a minute)
    reporters: ['default', './test/support/progress-reporter.ts'],
  },
});
