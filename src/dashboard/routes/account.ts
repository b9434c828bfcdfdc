import Type from 'typebox';
import { accountFields, addPlayMoney, presentAccount } from '../../accounts/index.js';
import type { DepositSource } from '../../deposits/index.js';
import { depositDisplay } from '../../deposits/index.js';
import { UsdString } from '../../http/schemas.js';
import { keyNames } from '../../keys/index.js';
import { accountUsage, listTransactions, TransactionQuery } from '../../ledger/index.js';
import { formatUsd } from '../../lib/money.js';
import { transactionsCsv } from '../csv.js';
import { fundsView } from '../funds.js';
import { type DashboardEdge, defineDashboardRoute } from './define.js';
import { walletRoutes } from './wallets.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const Period = Type.Object({
  requests: Type.Integer({ description: 'Paid requests' }),
  spendUsd: UsdString,
});

const Deposit = Type.Object({
  id: Type.String({ description: 'The ledger entry id; from the chain, the deposit reference' }),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('credited'),
    Type.Literal('held'),
    Type.Literal('ignored'),
  ]),
  token: Type.Union([Type.Literal('SOL'), Type.Literal('USDC'), Type.Null()]),
  amount: Type.Union([Type.String(), Type.Null()], { description: 'In the token’s units' }),
  usdValue: Type.Union([UsdString, Type.Null()], { description: 'Null while pending (valued when final)' }),
  rateUsd: Type.Union([Type.String(), Type.Null()], { description: 'USD per token used to value it' }),
  signature: Type.Union([Type.String(), Type.Null()]),
  slot: Type.Union([Type.Integer(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  memo: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});

/** Home, usage, ledger, funds: the account's money (docs/dashboard.md). */
export function accountRoutes(edge: DashboardEdge, deps: { deposits: DepositSource }): void {
  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/overview',
    operationId: 'overview',
    summary: 'The account, its spend today and this month, and whether its balance is low',
    response: Type.Object({
      account: Type.Object(accountFields),
      today: Period,
      month: Period,
      funded: Type.Boolean({
        description:
          'Whether money ever reached the account (a deposit, play money, an operator’s credit or adjustment); ' +
          'a live account never funded gets a call to fund it, not a low-balance warning',
      }),
      lowBalance: Type.Boolean({
        description: 'The balance is below `lowBalanceThresholdUsd` on an account that was funded',
      }),
      lowBalanceThresholdUsd: UsdString,
    }),
    handler: async ({ ctx, account }) => {
      const now = ctx.clock.now();
      const today = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS);
      const tomorrow = new Date(today.getTime() + DAY_MS);
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const period = async (from: Date) => {
        const usage = await accountUsage(ctx, keyNames, account.id, {
          from: from.toISOString(),
          to: tomorrow.toISOString(),
          groupBy: 'operation',
        });
        return { requests: usage.totals.requests, spendUsd: usage.totals.spendUsd };
      };
      const threshold = edge.settings.lowBalanceMicros;
      // A balance came from somewhere; only an empty account needs the look at its deposits.
      const funded =
        account.balanceMicros > 0n ||
        (await listTransactions(ctx, account.id, { kind: 'deposit', limit: 1 })).transactions.length > 0;
      return {
        account: presentAccount(account, edge.config),
        today: await period(today),
        month: await period(monthStart),
        funded,
        lowBalance: funded && account.balanceMicros < threshold,
        lowBalanceThresholdUsd: formatUsd(threshold),
      };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/transactions.csv',
    operationId: 'transactionsCsv',
    summary: 'The ledger as CSV, oldest first (the filters of the JSON list; at most 50,000 entries)',
    querystring: Type.Object(
      {
        kind: TransactionQuery.properties.kind,
        from: TransactionQuery.properties.from,
        to: TransactionQuery.properties.to,
      },
      { additionalProperties: false },
    ),
    response: Type.Object({}),
    produces: 'text/csv; charset=utf-8',
    handler: async ({ ctx, account, mode, query }, _request, reply) => {
      reply.header(
        'content-disposition',
        `attachment; filename="sibyl-${mode}-transactions-${ctx.clock.now().toISOString().slice(0, 10)}.csv"`,
      );
      return transactionsCsv(ctx, account.id, query);
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/funds',
    operationId: 'funds',
    summary: 'How to add funds: the deposit address, the Solana Pay links, the deposits so far',
    description:
      'Live accounts: the treasury address (`DEPOSIT_ADDRESS`), the account’s Solana Pay reference key and ' +
      'links for SOL and USDC. Until the deposit watcher runs (`watcher.enabled` false), deposits are credited ' +
      'by the operator. Sandbox accounts are never funded from the chain: play money instead.',
    response: Type.Object({
      watcher: Type.Object({ enabled: Type.Boolean() }),
      creditedBy: Type.Union([Type.Literal('chain'), Type.Literal('operator'), Type.Literal('play-money')]),
      depositAddress: Type.Union([Type.String(), Type.Null()]),
      usdcMint: Type.String(),
      referenceKey: Type.Union([Type.String(), Type.Null()]),
      solanaPayUrl: Type.Union([Type.String(), Type.Null()], { description: 'A SOL transfer request' }),
      solanaPayUsdcUrl: Type.Union([Type.String(), Type.Null()], { description: 'A USDC transfer request' }),
      minimumUsd: UsdString,
      deposits: Type.Array(Deposit, { description: 'Newest first (the last 50)' }),
    }),
    handler: async ({ ctx, account }) =>
      fundsView(ctx, { settings: depositDisplay(edge.config.deposits), source: deps.deposits }, account),
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/play-money',
    operationId: 'addPlayMoney',
    summary:
      'Adds 100.00 USD of play money, up to a balance of 1,000.00 (sandbox only: POST …/sandbox/play-money)',
    onlyMode: { mode: 'sandbox', reason: 'play money is for sandbox accounts only' },
    response: Type.Object({
      creditedUsd: UsdString,
      balanceUsd: UsdString,
      capUsd: UsdString,
    }),
    handler: async ({ ctx, account }) => addPlayMoney(ctx, account),
  });

  // The funds page's "Your wallets": which wallets' deposits count.
  walletRoutes(edge);
}
