import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // One test file per core (Vitest's default leaves one core idle): the files spend much of their
    // time waiting on a database or a child process. On 2 cores: PGlite 418 → 282 s, PostgreSQL
    // 280 → 174 s (2026-11-23).
    maxWorkers: availableParallelism(),
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
