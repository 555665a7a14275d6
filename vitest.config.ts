import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'sdk/**/*.test.ts'],
    // Starts a throwaway PostgreSQL server (or uses PG_URL): inject('pgUrl') / process.env.PG_URL.
    globalSetup: ['test/support/postgres.ts'],
    pool: 'forks',
    // Two files at a time even on two cores: most of a test's time is waiting (fsync, child
    // processes, a browser, timers), so the suite takes about half as long (docs/decisions.md).
    maxWorkers: 2,
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
