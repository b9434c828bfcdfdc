import { defineConfig } from 'vitest/config';

/**
 * `npm run dashboard:screenshots`: runs scripts/dashboard-screenshots.ts with the test helpers (a
 * temporary embedded database, the test wallet, headless Chromium). Not part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ['scripts/dashboard-screenshots.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
  },
});
