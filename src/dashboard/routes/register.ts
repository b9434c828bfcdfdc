import type { FastifyInstance } from 'fastify';
import type { DepositSource } from '../../deposits/index.js';
import { MAX_PARAM_LENGTH } from '../../http/edge.js';
import type { SecretBox } from '../../webhooks/index.js';
import { ledgerDeposits } from '../funds.js';
import { accountRoutes } from './account.js';
import { authRoutes } from './auth.js';
import { type DashboardConfig, dashboardEdge, overlongDashboardPath } from './define.js';
import { serveDashboard } from './static.js';
import { twinRoutes } from './twins.js';

export interface DashboardDeps {
  config: DashboardConfig;
  secrets: SecretBox;
  /** Where the funds page's deposits come from; default: the ledger's deposit entries. */
  deposits?: DepositSource | undefined;
  /** The built app's directory; default: dashboard/dist (tests hand in a fixture). */
  buildDir?: string;
}

/** The dashboard's routes (sign-in, the account's own, the API's account routes) and its built page. */
export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const edge = dashboardEdge(app, deps.config, deps.config.dashboard);
  authRoutes(edge, { secrets: deps.secrets });
  accountRoutes(edge, { deposits: deps.deposits ?? ledgerDeposits });
  // Keys, ledger, jobs, AI requests, webhooks: the API's account routes, at the session's door.
  twinRoutes(edge);
  overlongDashboardPath(app, MAX_PARAM_LENGTH);
  await serveDashboard(app, deps.buildDir);
}
