import type { CoreConfig } from '../core-settings.js';
import type { Database } from '../db/database.js';
import { readInstanceSetting, recordInstanceSetting } from '../db/instance-settings.js';
import type { Clock } from '../lib/clock.js';
import { isLoopbackHost } from './addresses.js';
import type { WebhookSettings } from './config.js';

/** What local development reads and changes of the configuration. */
type LocalConfig = Pick<CoreConfig, 'host'> & { webhooks: WebhookSettings };

const SETTING = 'local_development';

/**
 * docs/webhooks.md#local-development: whether this start allows private callback targets (and plain
 * http:// to loopback) without WEBHOOK_ALLOW_PRIVATE_TARGETS being set. Only an embedded database
 * listening on loopback qualifies, and only once its first start has turned it on (recorded in
 * instance_settings): nothing else does — not PostgreSQL, not a non-loopback HOST, and never over a
 * WEBHOOK_ALLOW_PRIVATE_TARGETS the operator set either way.
 */
export async function localDevelopment(
  db: Database,
  config: LocalConfig,
  clock: Clock,
  firstStart: boolean,
): Promise<boolean> {
  if (db.kind !== 'pglite' || config.webhooks.allowPrivateTargetsSet) return false;
  if (!isLoopbackHost(config.host)) return false;
  if (firstStart) {
    await recordInstanceSetting(db, SETTING, 'on', clock.now());
    return true;
  }
  return (await readInstanceSetting(db, SETTING)) === 'on';
}

/** The configuration with private targets allowed, for the API and the worker of this process. */
export function withPrivateTargets<C extends LocalConfig>(config: C): C {
  return { ...config, webhooks: { ...config.webhooks, allowPrivateTargets: true } };
}

/** What the start banner says about it: turned on by this start, or by the data directory's first. */
export function localDevelopmentNotice(port: number, firstStart: boolean): string[] {
  return [
    firstStart
      ? '  Local development is on (turned on by this first start of the embedded database): callbacks may'
      : '  Local development is on (turned on by the first start of this embedded database): callbacks may',
    '  go to http://localhost and other private addresses — try `"callbackUrl": "http://localhost:4000/hook"`,',
    `  or forward a deployment's callbacks with \`npm run sibyl -- webhooks listen --forward-to http://localhost:4000/hook\`.`,
    `  Set WEBHOOK_ALLOW_PRIVATE_TARGETS=false to turn it off (API on port ${port}).`,
    '',
  ];
}
