/** The dashboard's descriptor (src/feature.ts): its settings, its routes and page, its pruned tables. */
import type { Feature } from '../feature.js';
import type { RetentionSettings } from '../retention/index.js';
import type { SecretBox } from '../webhooks/index.js';
import { dashboardSettings } from './config.js';
import type { DashboardConfig } from './routes/define.js';

export interface Needs {
  config: DashboardConfig & { retention: RetentionSettings };
  ports: { secrets: SecretBox };
}

export const dashboardFeature: Feature<{ dashboard: typeof dashboardSettings }, Needs> = {
  name: 'dashboard',
  tables: ['dashboard_sessions', 'sign_in_challenges'],
  settings: { dashboard: dashboardSettings },
  async api(app, { config, ports }) {
    const [{ registerDashboard }, { chainDeposits }] = await Promise.all([
      import('./routes/register.js'),
      import('../deposits/index.js'),
    ]);
    await registerDashboard(app, {
      config,
      secrets: ports.secrets,
      // Deposits from the chain (src/deposits) when the watcher is configured.
      ...(config.deposits.watch !== null ? { deposits: chainDeposits } : {}),
    });
  },
  async retention() {
    const { PRUNE_CHALLENGES, PRUNE_EXPIRED_SESSIONS, PRUNE_IDLE_SESSIONS } = await import('./sql.js');
    return [
      {
        name: 'dashboard_sessions (expired)',
        prune: PRUNE_EXPIRED_SESSIONS,
        keepMs: (c) => c.retention.signInsMs,
      },
      { name: 'dashboard_sessions (idle)', prune: PRUNE_IDLE_SESSIONS, keepMs: (c) => c.retention.signInsMs },
      { name: 'sign_in_challenges', prune: PRUNE_CHALLENGES, keepMs: (c) => c.retention.signInsMs },
    ];
  },
};
