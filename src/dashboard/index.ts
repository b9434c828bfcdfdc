import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { chainDeposits } from '../deposits/index.js';
import type { Feature } from '../feature.js';
import type { SecretBox } from '../webhooks/index.js';
import { dashboardSettings } from './config.js';
import { type DepositSource, ledgerDeposits } from './funds.js';
import { accountRoutes } from './routes/account.js';
import { authRoutes } from './routes/auth.js';
import { dashboardEdge } from './routes/define.js';
import { twinRoutes } from './routes/twins.js';
import { serveDashboard } from './static.js';

/**
 * The dashboard (docs/dashboard.md): Sign-In With Solana, sessions, the single-page app
 * at /dashboard/ and its JSON endpoints under /dashboard/api/, which call the same domain verbs as
 * the API. What the room offers: its settings and its routes (its expired sessions and sign-in
 * challenges are pruned by src/retention).
 */
export { type DashboardSettings, dashboardSettings } from './config.js';
export type { DepositSource, DepositView } from './funds.js';
/** What retention deletes of the dashboard's tables (retention/tables.ts). */
export { PRUNE_CHALLENGES, PRUNE_EXPIRED_SESSIONS, PRUNE_IDLE_SESSIONS } from './sql.js';

export interface DashboardDeps {
  config: Config;
  secrets: SecretBox;
  /** Where the funds page's deposits come from; default: the ledger's deposit entries. */
  deposits?: DepositSource;
  /** The built app's directory; default: dashboard/dist (tests hand in a fixture). */
  buildDir?: string;
}

export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const edge = dashboardEdge(app, deps.config, deps.config.dashboard);
  authRoutes(edge, { secrets: deps.secrets });
  accountRoutes(edge, { deposits: deps.deposits ?? ledgerDeposits });
  // Keys, ledger, jobs, AI requests, webhooks: the API's account routes, at the session's door.
  twinRoutes(edge);
  await serveDashboard(app, deps.buildDir);
}

export const dashboardFeature: Feature<{ dashboard: typeof dashboardSettings }> = {
  name: 'dashboard',
  settings: { dashboard: dashboardSettings },
  api: (app, deps) =>
    registerDashboard(app, {
      config: deps.config,
      secrets: deps.ports.secrets,
      // Deposits from the chain (src/deposits) when the watcher is configured.
      ...(deps.config.deposits.watch !== null ? { deposits: chainDeposits } : {}),
    }),
};
