import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/faults/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // files run in parallel workers; each test file owns its own database
    pool: 'forks',
  },
});
