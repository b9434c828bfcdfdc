import { liveReferenceOwners, liveWalletOwners } from '../accounts/index.js';
import type { Context, TxContext } from '../context.js';
import type { Queryable } from '../db/database.js';
import { creditDeposits } from '../ledger/index.js';
import { formatUsd } from '../lib/money.js';
import { recordAccountEvents } from '../webhooks/index.js';
import type { Deposit } from './deposits.js';
import type { DepositPrices } from './prices.js';
import * as sql from './sql.js';
import { formatUnits } from './units.js';
import { rateFromPrice, valueDeposit } from './value.js';

export type FinalStatus = 'credited' | 'unattributed' | 'held' | 'ignored';

/** Whose deposit it is, and how that was decided (docs/deposits.md#who-sent-it-attribution); null account: nobody's by rule. */
export interface Attribution {
  accountId: string | null;
  how: 'wallet' | 'reference' | 'ambiguous_reference' | null;
}

/** A finalized deposit with its attribution and value: what one row (and at most one entry) records. */
export interface Booked {
  deposit: Deposit;
  status: FinalStatus;
  /** held/ignored: why; credited: how it was attributed. */
  reason: string | null;
  accountId: string | null;
  rate: string | null;
  usdMicros: bigint | null;
}

/**
 * Attribution for a batch of deposits, in two queries: (1) the sender is a wallet of a live account
 * (its sign-in wallet or one it linked); for a token transfer signed by a delegate, the source
 * account's owner is tried next; (2) else a live account's Solana Pay reference key is among the
 * instruction's accounts — exactly one account's, or it is ambiguous; (3) else nobody's.
 */
export async function attribute(ctx: Context, deposits: Deposit[]): Promise<Map<string, Attribution>> {
  const wallets = [...new Set(deposits.flatMap((d) => [d.sender, d.sourceOwner]).filter((w) => w !== null))];
  const keys = [...new Set(deposits.flatMap((d) => d.accounts))];
  const walletOwners = new Map<string, Set<string>>();
  for (const row of await liveWalletOwners(ctx, wallets)) {
    const owners = walletOwners.get(row.address) ?? new Set();
    owners.add(row.accountId);
    walletOwners.set(row.address, owners);
  }
  const referenceOwners = new Map<string, string>();
  for (const row of await liveReferenceOwners(ctx, keys)) referenceOwners.set(row.key, row.accountId);
  const ownerOf = (wallet: string | null): string | null => {
    const owners = wallet === null ? undefined : walletOwners.get(wallet);
    // A wallet belongs to one account; should two ever claim it, neither is guessed.
    return owners?.size === 1 ? ([...owners][0] as string) : null;
  };
  const out = new Map<string, Attribution>();
  for (const d of deposits) {
    const byWallet = ownerOf(d.sender) ?? ownerOf(d.sourceOwner);
    if (byWallet !== null) {
      out.set(d.reference, { accountId: byWallet, how: 'wallet' });
      continue;
    }
    const byReference = new Set(
      d.accounts.map((k) => referenceOwners.get(k)).filter((a): a is string => a !== undefined),
    );
    if (byReference.size === 1) {
      out.set(d.reference, { accountId: [...byReference][0] as string, how: 'reference' });
    } else {
      out.set(d.reference, { accountId: null, how: byReference.size > 1 ? 'ambiguous_reference' : null });
    }
  }
  return out;
}

/**
 * Prices a batch at each deposit's block time (one lookup per asset and minute), and decides each
 * one's fate: ignored (below the minimum) before held (no price, USDC off its peg) before
 * unattributed before credited.
 */
export async function book(
  ctx: Context,
  prices: DepositPrices,
  minUsdMicros: bigint,
  deposits: Deposit[],
): Promise<Booked[]> {
  const attributions = await attribute(ctx, deposits);
  const cache = new Map<string, Promise<number | null>>();
  const priceAt = (asset: 'SOL' | 'USDC', blockTime: number | null) => {
    const key = `${asset}:${blockTime === null ? 'now' : Math.floor(blockTime / 60)}`;
    let price = cache.get(key);
    if (!price) {
      price = prices.at(asset, blockTime === null ? null : new Date(blockTime * 1000));
      cache.set(key, price);
    }
    return price;
  };
  const out: Booked[] = [];
  for (const deposit of deposits) {
    const solPrice = deposit.asset === 'SOL' ? await priceAt('SOL', deposit.blockTime) : null;
    const usdcPrice = deposit.asset === 'USDC' ? await priceAt('USDC', deposit.blockTime) : null;
    const value = valueDeposit(
      deposit,
      { usdcPrice, solRate: solPrice === null ? null : rateFromPrice(solPrice) },
      minUsdMicros,
    );
    const who = attributions.get(deposit.reference) ?? { accountId: null, how: null };
    const base = { deposit, rate: value.rate, usdMicros: value.usdMicros, accountId: who.accountId };
    if (value.status === 'ignored' || (value.usdMicros !== null && value.usdMicros <= 0n)) {
      out.push({ ...base, status: 'ignored', reason: 'below_minimum' });
    } else if (value.status === 'held') {
      out.push({ ...base, status: 'held', reason: value.reason });
    } else if (who.accountId === null) {
      out.push({ ...base, status: 'unattributed', reason: who.how });
    } else {
      out.push({ ...base, status: 'credited', reason: who.how });
    }
  }
  return out;
}

/** The ledger entry's memo: what arrived, at what rate, where. */
export function depositMemo(d: Deposit, rate: string): string {
  return `${formatUnits(d.amount, d.decimals)} ${d.asset} at ${rate} USD, slot ${d.slot}`;
}

/**
 * Writes a batch of finalized deposits inside the caller's transaction: the credited ones in the
 * ledger by its batch credit (one statement, each under its reference, unique in the ledger), then
 * every row with its entry (one statement). A reference that already has a final row is skipped (a
 * rescan, or a rerun after a crash): nothing doubles. Returns the deposits written now.
 */
export async function writeFinal(ctx: TxContext, booked: Booked[]): Promise<Booked[]> {
  if (booked.length === 0) return [];
  const { tx } = ctx;
  const done = new Set(
    (await tx.query<{ reference: string }>(sql.FINAL_OF, [booked.map((b) => b.deposit.reference)])).map(
      (r) => r.reference,
    ),
  );
  const written = booked.filter((b) => {
    if (done.has(b.deposit.reference)) return false;
    done.add(b.deposit.reference);
    return true;
  });
  if (written.length === 0) return [];
  const credits = written.filter((b) => b.status === 'credited');
  const entries = await creditDeposits(
    ctx,
    credits.map((b) => ({
      accountId: b.accountId as string,
      amountMicros: b.usdMicros as bigint,
      reference: b.deposit.reference,
      memo: depositMemo(b.deposit, b.rate as string),
    })),
  );
  const entryOf = new Map(credits.map((b, i) => [b, entries[i]?.entryId ?? null]));
  const column = <T>(f: (b: Booked) => T) => written.map(f);
  const rows = await tx.query<{ reference: string; seen_at: Date }>(sql.WRITE_FINAL_BATCH, [
    column((b) => b.deposit.reference),
    column((b) => b.deposit.signature),
    column((b) => b.deposit.instruction),
    column((b) => b.deposit.asset),
    column((b) => b.deposit.amount),
    column((b) => b.deposit.decimals),
    column((b) => b.deposit.sender),
    column((b) => b.deposit.slot),
    column((b) => (b.deposit.blockTime === null ? null : new Date(b.deposit.blockTime * 1000))),
    column((b) => b.status),
    column((b) => b.reason),
    column((b) => b.accountId),
    column((b) => b.rate),
    column((b) => b.usdMicros),
    column((b) => entryOf.get(b) ?? null),
    ctx.clock.now(),
  ]);
  const seenAt = new Map(rows.map((r) => [r.reference, r.seen_at]));
  await announceCredits(
    ctx,
    credits.map(({ deposit, ...b }, i) => ({
      accountId: b.accountId as string,
      reference: deposit.reference,
      signature: deposit.signature,
      asset: deposit.asset,
      amount: BigInt(deposit.amount),
      decimals: deposit.decimals,
      slot: Number(deposit.slot),
      rate: b.rate as string,
      usdMicros: b.usdMicros as bigint,
      seenAt: seenAt.get(deposit.reference) ?? ctx.clock.now(),
      balanceMicros: entries[i]?.balanceMicros ?? 0n,
    })),
  );
  return written;
}

/** A deposit credited now, as its `deposit.credited` event shows it. */
export interface CreditedDeposit {
  accountId: string;
  reference: string;
  signature: string;
  asset: 'SOL' | 'USDC';
  amount: bigint;
  decimals: number;
  slot: number;
  rate: string;
  usdMicros: bigint;
  /** When the deposit was first seen (its row's `seen_at`): the deposits list's `createdAt`. */
  seenAt: Date;
  /** The account's balance right after this deposit's credit (the ledger's batch credit answers it). */
  balanceMicros: bigint;
}

/**
 * `deposit.credited` for each deposit credited now, in the transaction that credits it — the
 * watcher's and the operator's (`sibyl deposits assign`) alike (docs/webhooks.md#event-catalog): the
 * deposit as the deposits list shows it, and the balance right after its credit; all of them in one
 * statement (recordAccountEvents). Deposits credit live accounts only.
 */
export async function announceCredits(ctx: TxContext, credited: CreditedDeposit[]): Promise<void> {
  const at = ctx.clock.now();
  await recordAccountEvents(
    ctx.tx,
    credited.map((c) => ({
      accountId: c.accountId,
      mode: 'live' as const,
      type: 'deposit.credited' as const,
      at,
      data: {
        id: c.reference,
        status: 'credited' as const,
        token: c.asset,
        amount: formatUnits(c.amount, c.decimals),
        usdValue: formatUsd(c.usdMicros),
        rateUsd: c.rate,
        signature: c.signature,
        slot: c.slot,
        reference: c.reference,
        memo: null,
        createdAt: c.seenAt.toISOString(),
        balanceUsd: formatUsd(c.balanceMicros),
      },
    })),
  );
}

/**
 * The pending set, replaced (inside the caller's transaction): deposits seen at `confirmed` get a
 * pending row (attributed, so the account sees it coming); pending rows no longer listed go.
 */
export async function writePending(
  tx: Queryable,
  pending: Deposit[],
  attributions: Map<string, Attribution>,
  now: Date,
): Promise<void> {
  for (const d of pending) {
    const who = attributions.get(d.reference);
    await tx.query(sql.WRITE_PENDING, [
      d.reference,
      d.signature,
      d.instruction,
      d.asset,
      d.amount,
      d.decimals,
      d.sender,
      d.slot,
      d.blockTime === null ? null : new Date(d.blockTime * 1000),
      who?.how ?? null,
      who?.accountId ?? null,
      now,
    ]);
  }
  await tx.query(sql.DROP_STALE_PENDING, [pending.map((d) => d.reference)]);
}
