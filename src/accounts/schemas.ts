import Type from 'typebox';
import { FEES } from '../fees.js';
import { Timestamp, UsdString } from '../http/schemas.js';
import { formatUsd } from '../lib/money.js';
import { type Account, MAX_ACTIVE_KEYS } from './accounts.js';

const Pricing = Type.Object(
  {
    ...(Object.fromEntries(Object.keys(FEES).map((name) => [name, UsdString])) as Record<
      keyof typeof FEES,
      typeof UsdString
    >),
    streamMinute: Type.String({
      pattern: '^-?\\d+\\.\\d{2,6}$',
      description:
        'Each started minute of a live-data stream (GET /stream/prices, /stream/markets): `STREAM_MINUTE_USD`',
    }),
  },
  { description: 'What each operation costs, in USD' },
);

/** What the account's pricing needs besides the fixed fees: the configured price of a stream minute. */
export interface PricingSettings {
  liveStreams: { minuteMicros: bigint };
}

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

/** An account as the API and the dashboard show it (with `accountFields`). */
export function presentAccount(account: Account, settings: PricingSettings) {
  return {
    id: account.id,
    mode: account.mode,
    status: account.status,
    walletAddress: account.walletAddress,
    balanceUsd: formatUsd(account.balanceMicros),
    currency: 'USD' as const,
    createdAt: account.createdAt.toISOString(),
    pricing: {
      ...(Object.fromEntries(Object.entries(FEES).map(([k, v]) => [k, formatUsd(v)])) as Record<
        keyof typeof FEES,
        string
      >),
      streamMinute: formatUsd(settings.liveStreams.minuteMicros),
    },
    limits: { maxActiveKeys: MAX_ACTIVE_KEYS },
  };
}

/** The operator's view shows no pricing. */
const NO_PRICING: PricingSettings = { liveStreams: { minuteMicros: 0n } };

/**
 * An account as the operator's command line shows it: with its webhook secret in clear (the
 * webhooks room's `webhookSecretOf`) when one is given, without pricing.
 */
export function presentAccountToOperator(account: Account, webhookSecret?: string) {
  const { id, mode, status, walletAddress, balanceUsd, createdAt } = presentAccount(account, NO_PRICING);
  return {
    id,
    /** Deprecated alias of `id` (the API's name), kept for one release (CHANGELOG.md). */
    accountId: id,
    mode,
    status,
    walletAddress,
    balanceUsd,
    ...(webhookSecret === undefined ? {} : { webhookSecret }),
    createdAt,
  };
}
