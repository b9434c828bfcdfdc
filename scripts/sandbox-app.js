// A real app on a throwaway embedded database with a sandbox account and the demo markets, for
// the scripts that record what the service answers (OpenAPI examples, the client's document).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../dist/app.js';
import { loadConfig } from '../dist/config.js';
import { migrate } from '../dist/db/migrate.js';
import { PgliteDatabase } from '../dist/db/pglite.js';
import { createSandboxStarter } from '../dist/first-start.js';
import { systemClock } from '../dist/lib/clock.js';
import { loadDemoMarkets } from '../dist/markets/demo/demo.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';

/**
 * A receiver that accepts every webhook, so a test delivery in a recording shows a success. `hold(url)`
 * keeps the sends to one URL waiting until the function it returns is called (a slow receiver).
 */
function acceptingReceiver() {
  const holds = new Map();
  return {
    /** @type {import('../dist/webhooks/index.js').WebhookTransport} */
    transport: {
      async send(request) {
        await holds.get(request.url);
        return { kind: 'response', statusCode: 200, latencyMs: 42, bodyPreview: 'ok' };
      },
      async close() {},
    },
    hold(url) {
      let release;
      holds.set(
        url,
        new Promise((resolve) => {
          release = resolve;
        }),
      );
      return () => {
        holds.delete(url);
        release();
      };
    },
  };
}

/**
 * Runs `fn(app, key, { db, config, hold })` and then removes everything. The configuration is the
 * defaults; test webhooks are answered 200 without leaving the process (`hold`: see
 * `acceptingReceiver`).
 */
export async function withSandboxApp(fn) {
  const dir = mkdtempSync(join(tmpdir(), 'sibyl-script-'));
  const { db } = await PgliteDatabase.open(join(dir, 'data'));
  try {
    await migrate(db);
    const starter = await createSandboxStarter(db, systemClock, clearSecretBox);
    await loadDemoMarkets(db, systemClock);
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const receiver = acceptingReceiver();
    const app = await buildApp({
      config,
      db,
      clock: systemClock,
      secrets: clearSecretBox,
      webhookTransport: receiver.transport,
    });
    await app.ready();
    try {
      return await fn(app, starter.key.key, { db, config, hold: receiver.hold });
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
