import { randomBytes } from 'node:crypto';
import type { Account } from '../accounts/index.js';
import { type Context, queryable } from '../context.js';
import type { DepositDisplay } from '../deposits/index.js';
import { listTransactions } from '../ledger/index.js';
import { encodeBase58 } from '../lib/base58.js';
import { formatUsd } from '../lib/money.js';
import * as sql from './sql.js';

/** One deposit as docs/deposits.md#statuses describes it; the fields only the chain knows are null until the watcher lands. */
export interface DepositView {
  id: string;
  status: 'pending' | 'credited' | 'held' | 'ignored';
  token: 'SOL' | 'USDC' | null;
  amount: string | null;
  /** Null while pending: a deposit is valued at its finalization. */
  usdValue: string | null;
  rateUsd: string | null;
  signature: string | null;
  slot: number | null;
  reference: string | null;
  memo: string | null;
  createdAt: string;
}

/**
 * Where the funds page's deposits come from. The seam for the deposit watcher (docs/deposits.md#the-watcher): until
 * it lands, the ledger's deposit entries, all credited (by the operator, or play money).
 */
export interface DepositSource {
  /** Whether deposits are credited from the chain. */
  watching: boolean;
  list(ctx: Context, accountId: string): Promise<DepositView[]>;
}

export const ledgerDeposits: DepositSource = {
  watching: false,
  async list(ctx, accountId) {
    const { transactions } = await listTransactions(ctx, accountId, { kind: 'deposit', limit: 50 });
    return transactions.map((entry) => ({
      id: entry.id,
      status: 'credited' as const,
      token: null,
      amount: null,
      usdValue: entry.amountUsd,
      rateUsd: null,
      // A watcher's reference is `sol:<signature>:<instruction>`; an operator's may be a signature too.
      signature: entry.reference?.startsWith('sol:') ? (entry.reference.split(':')[1] ?? null) : null,
      slot: null,
      reference: entry.reference,
      memo: entry.memo,
      createdAt: entry.createdAt,
    }));
  },
};

/**
 * The account's Solana Pay reference key, drawn on first use: a random 32-byte public key in base58
 * that a payment link carries, so a transfer naming it is attributed to the account (docs/deposits.md#who-sent-it-attribution).
 */
export async function depositReference(ctx: Context, accountId: string): Promise<string> {
  const [row] = await queryable(ctx).query<{ deposit_reference: string }>(sql.DEPOSIT_REFERENCE, [
    accountId,
    encodeBase58(randomBytes(32)),
  ]);
  if (!row) throw new Error(`account ${accountId} is missing`);
  return row.deposit_reference;
}

/** A Solana Pay transfer request (docs.solanapay.com/spec): the wallet asks the payer for the amount. */
export function solanaPayUrl(recipient: string, reference: string, splToken?: string): string {
  const query = new URLSearchParams();
  if (splToken) query.set('spl-token', splToken);
  query.set('reference', reference);
  query.set('label', 'Sibyl');
  query.set('message', 'Sibyl account deposit');
  return `solana:${recipient}?${query.toString().replaceAll('+', '%20')}`;
}

/** `GET /dashboard/api/{mode}/funds`: how to add funds to the account, and the deposits so far. */
export async function fundsView(
  ctx: Context,
  deps: { settings: DepositDisplay; source: DepositSource },
  account: Pick<Account, 'id' | 'mode'>,
) {
  const { settings, source } = deps;
  const onChain = account.mode === 'live' && settings.address !== null;
  const reference = account.mode === 'live' ? await depositReference(ctx, account.id) : null;
  return {
    watcher: { enabled: source.watching && account.mode === 'live' },
    creditedBy:
      account.mode === 'sandbox'
        ? ('play-money' as const)
        : source.watching
          ? ('chain' as const)
          : ('operator' as const),
    depositAddress: onChain ? settings.address : null,
    usdcMint: settings.usdcMint,
    referenceKey: reference,
    solanaPayUrl: onChain && reference ? solanaPayUrl(settings.address as string, reference) : null,
    solanaPayUsdcUrl:
      onChain && reference ? solanaPayUrl(settings.address as string, reference, settings.usdcMint) : null,
    minimumUsd: formatUsd(settings.minimumMicros),
    deposits: await source.list(ctx, account.id),
  };
}
