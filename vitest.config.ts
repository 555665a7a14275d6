import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'sdk/**/*.test.ts'],
    // Starts a throwaway PostgreSQL server (or uses PG_URL): inject('pgUrl') / process.env.PG_URL.
    globalSetup: ['test/support/postgres.ts'],
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
