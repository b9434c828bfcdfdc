import Type from 'typebox';
import { FEES } from '../fees.js';
import { Timestamp, UsdString } from '../http/schemas.js';
import { MAX_ACTIVE_KEYS } from '../keys/keys.js';
import { formatUsd } from '../lib/money.js';
import type { Account } from './accounts.js';

const Pricing = Type.Object(
  Object.fromEntries(Object.keys(FEES).map((name) => [name, UsdString])) as Record<
    keyof typeof FEES,
    typeof UsdString
  >,
  { description: 'What each operation costs, in USD' },
);

/** An account as GET /account and the dashboard show it, but for the key and the webhook secret. */
export const accountFields = {
  id: Type.String(),
  mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
    description: 'sandbox accounts use simulated providers and play money',
  }),
  status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]),
  walletAddress: Type.Union([Type.String(), Type.Null()], { description: 'Connected Solana wallet' }),
  balanceUsd: UsdString,
  currency: Type.Literal('USD'),
  createdAt: Timestamp,
  pricing: Pricing,
  limits: Type.Object({
    maxActiveKeys: Type.Integer(),
  }),
};

export function presentAccount(account: Account) {
  return {
    id: account.id,
    mode: account.mode,
    status: account.status,
    walletAddress: account.walletAddress,
    balanceUsd: formatUsd(account.balanceMicros),
    currency: 'USD' as const,
    createdAt: account.createdAt.toISOString(),
    pricing: Object.fromEntries(Object.entries(FEES).map(([k, v]) => [k, formatUsd(v)])) as Record<
      keyof typeof FEES,
      string
    >,
    limits: { maxActiveKeys: MAX_ACTIVE_KEYS },
  };
}
