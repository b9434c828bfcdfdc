import { type Account, depositReference } from '../accounts/index.js';
import type { Context } from '../context.js';
import type { DepositDisplay, DepositSource } from '../deposits/index.js';
import { listTransactions } from '../ledger/index.js';
import { formatUsd } from '../lib/money.js';

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
