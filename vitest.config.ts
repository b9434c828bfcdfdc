import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'client/test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // One test file per core (Vitest's default leaves one core idle): the files spend much of their
    // time waiting on a database or a child process. On 2 cores: PGlite 418 → 282 s, PostgreSQL
    // 280 → 174 s (2026-11-23).
    maxWorkers: availableParallelism(),
    // Files share their worker's module cache instead of importing the service anew each: importing
    // it cost ~2 s of CPU per file, half the suite. Every file builds its own app, database and
    // clock (test/helpers/context.ts), so nothing a case sees is carried from another file.
    // test/ledger + test/keys, 12 files on a loaded machine: 103 → 54 s of CPU (2026-11-26).
    isolate: false,
    // The longest files start first, so that none of them begins late and ends the run alone
    // (docs/testing.md#where-the-time-goes).
    sequence: { sequencer: SlowestFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
