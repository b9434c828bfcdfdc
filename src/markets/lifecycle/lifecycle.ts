import type { AccountMode } from '../../accounts/index.js';
import {
  DEFAULT_CONFIDENCE_THRESHOLD,
  marketResolution,
  type Resolution,
  type Resolver,
  resolutionAnswer,
} from '../../ai/index.js';
import type { Attestation, Attestations } from '../../attestations/index.js';
import type { Database, Queryable } from '../../db/database.js';
import { AppError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';
import { randomBase62 } from '../../lib/ids.js';
import type { Log } from '../../logger.js';
import { type PriceService, parseTarget } from '../../prices/index.js';
import type { QueueHandler } from '../../queue/queue.js';
import { recordMarketChanges } from '../log/market-log.js';
import { listedMarketsChanged } from '../read/list-cache.js';
import * as sql from './lifecycle-sql.js';
import { type Actor, applyResolution, applyStatus } from './status.js';

/** A market whose closing the platform's newer status refused is looked at again this much later. */
const RECHECK_MS = 60_000;
const BY: Actor = 'lifecycle';

export interface LifecycleDeps {
  db: Database;
  clock: Clock;
  log: Log;
  prices: PriceService;
  resolver: Resolver;
  settings: { lifecycleConcurrency: number; lifecycleLeaseMs: number };
  /**
   * Signs an AI market's resolution as its official one (kind 3,
   * docs/attestations.md#which-resolution-is-official); absent or off: resolved unsigned.
   */
  attestations?: Attestations | undefined;
}

export interface ClaimedMarket {
  id: string;
  status: string;
  resolution_type: 'PRICE_FEED' | 'AI' | 'ADMIN' | 'MANUAL_VOTE';
  sandbox: boolean;
  closes_at: Date;
  price_symbol: string | null;
  price_condition: 'above' | 'below' | null;
  price_target: number | null;
  price_tolerance: number | null;
  title: string;
  description: string;
  lifecycle_lease_token: string;
}

/**
 * What an automatic resolution found: a winner, or why there is none (left RESOLVING); for an AI
 * market, the models' resolution and the outcomes they were asked about, which its attestation signs.
 */
export type AutoResolution =
  | { winner: number; details: Record<string, unknown>; ai?: { resolution: Resolution; outcomes: string[] } }
  | { winner: null; details: Record<string, unknown> };

/** The official resolution's attestation and the votes whose evidence it hashes. */
interface Official {
  attestation: Attestation;
  votes: { model: string; outcomeIndex: number | null; confidence: number | null; evidence: unknown[] }[];
}

/**
 * The market lifecycle (docs/markets.md#lifecycle): OPEN markets past `closesAt` become CLOSED, then
 * RESOLVING; PRICE_FEED markets resolve from a valid VWAP, AI markets through the AI resolution
 * engine, once — a market they cannot decide stays RESOLVING for an administrator. Markets are
 * claimed with a lease; the final step runs only while the lease is held and the market is still
 * RESOLVING, so an administrator's resolution made meanwhile stands.
 */
export function lifecycleQueueHandler(deps: LifecycleDeps): QueueHandler<ClaimedMarket> {
  const { db, settings } = deps;
  return {
    name: 'market-lifecycle',
    channel: sql.LIFECYCLE_CHANNEL,
    concurrency: settings.lifecycleConcurrency,
    claim: (limit, now) =>
      db.query<ClaimedMarket>(sql.CLAIM, [now, limit, randomBase62(16), settings.lifecycleLeaseMs]),
    process: (market) => advance(deps, market),
    async nextDueAt() {
      const [row] = await db.query<{ next: Date | null }>(sql.NEXT_DUE);
      return row?.next ?? null;
    },
  };
}

async function advance(deps: LifecycleDeps, market: ClaimedMarket): Promise<void> {
  const { db, clock } = deps;
  const token = market.lifecycle_lease_token;
  // Closing: OPEN → CLOSED → RESOLVING, each recorded in resolution.details.transitions.
  const status = await db.transaction(async (tx) => {
    const [row] = await tx.query<{ status: string }>(sql.LOCK_LEASED, [market.id, token]);
    if (!row) return null; // the lease was lost: another worker has it
    const at = clock.now().toISOString();
    if (row.status === 'OPEN') await move(tx, market.id, 'CLOSED', at, '1-closed');
    const [closed] = await tx.query<{ status: string }>(sql.LOCK_LEASED, [market.id, token]);
    if (closed?.status === 'CLOSED') await move(tx, market.id, 'RESOLVING', at, '2-resolving');
    const [now] = await tx.query<{ status: string }>(sql.LOCK_LEASED, [market.id, token]);
    await recordMarketChanges(tx, { marketIds: [market.id] }); // the market stream (docs/streams.md#markets)
    return now?.status ?? null;
  });
  if (status === null) return;
  listedMarketsChanged(db);
  const automatic = market.resolution_type === 'PRICE_FEED' || market.resolution_type === 'AI';
  if (status !== 'RESOLVING' || !automatic) {
    // Still OPEN: the platform's newer status stands; look again later rather than at once.
    const retryAt = status === 'OPEN' ? new Date(clock.now().getTime() + RECHECK_MS) : null;
    await db.query(sql.RELEASE, [market.id, token, false, retryAt]);
    return;
  }

  // An AI market is resolved with its attestation or not at all: a worker whose key a rotation
  // retired leaves it for one that signs (docs/attestations.md#rotation).
  if (market.resolution_type === 'AI' && (await cannotSign(deps.attestations))) return giveBack(deps, market);
  const found = await resolveAutomatically(deps, market);
  const now = clock.now();
  let official: Official | null = null;
  if (found.winner !== null && found.ai) {
    try {
      official = await signOfficial(deps, market, found.ai, now.getTime());
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'ATTESTATION_UNAVAILABLE')) throw err;
      return giveBack(deps, market);
    }
  }
  await db.transaction(async (tx) => {
    const [row] = await tx.query<{ status: string }>(sql.LOCK_LEASED, [market.id, token]);
    if (!row) return;
    const at = now.toISOString();
    const details = { autoResolution: { at, by: BY, ...found.details, winningOutcomeIndex: found.winner } };
    if (row.status === 'RESOLVING' && found.winner !== null) {
      const eventId = `lifecycle:${market.id}:3-resolved`; // sorts after the steps before it, at the same time
      const applied = await applyResolution(tx, {
        marketId: market.id,
        winningOutcomeIndex: found.winner,
        at,
        eventId,
        by: BY,
        details,
      });
      if (applied.recorded && official) {
        await tx.query(sql.STORE_ATTESTATION, [
          market.id,
          eventId,
          JSON.stringify(official.attestation),
          JSON.stringify(official.votes),
        ]);
      }
    } else if (row.status === 'RESOLVING') {
      await tx.query(sql.NOTE_DETAILS, [market.id, JSON.stringify(details)]);
    }
    await tx.query(sql.RELEASE, [market.id, token, true, null]);
    await recordMarketChanges(tx, { marketIds: [market.id] });
  });
  listedMarketsChanged(db);
  deps.log.info({ marketId: market.id, winner: found.winner }, 'market resolution attempted');
}

/** Whether this worker cannot sign because a rotation retired its key (attestations off is not that). */
async function cannotSign(attestations: Attestations | undefined): Promise<boolean> {
  return attestations !== undefined && (await attestations.ready()) && !(await attestations.signing());
}

/**
 * An AI market this worker may not resolve because it cannot sign: its lease is released, the
 * resolution not marked as tried, and it comes back after a lease's time, to a worker that signs.
 */
async function giveBack(deps: LifecycleDeps, market: ClaimedMarket): Promise<void> {
  deps.log.error(
    { marketId: market.id },
    'market not resolved: this worker cannot sign (its attestation key was retired); back after its lease',
  );
  const retryAt = new Date(deps.clock.now().getTime() + deps.settings.lifecycleLeaseMs);
  await deps.db.query(sql.RELEASE, [market.id, market.lifecycle_lease_token, false, retryAt]);
}

/** The market's official resolution signed (kind 3); null when attestations are off. Throws 503 when refused. */
async function signOfficial(
  deps: LifecycleDeps,
  market: ClaimedMarket,
  ai: { resolution: Resolution; outcomes: string[] },
  timeMs: number,
): Promise<Official | null> {
  if (!deps.attestations) return null;
  const { votes, consensus } = ai.resolution;
  const attestation = await deps.attestations.sign(
    marketResolution(
      {
        id: market.id,
        mode: market.sandbox ? 'sandbox' : 'live',
        title: market.title,
        outcomes: ai.outcomes,
        description: market.description,
      },
      resolutionAnswer(consensus, votes),
      timeMs,
    ),
  );
  if (!attestation) return null;
  const inSlotOrder = [...votes].sort((a, b) => a.position - b.position);
  return {
    attestation,
    votes: inSlotOrder.map((v) => ({
      model: v.model,
      outcomeIndex: v.outcomeIndex,
      confidence: v.confidence,
      evidence: v.evidence,
    })),
  };
}

async function move(
  tx: Queryable,
  marketId: string,
  status: 'CLOSED' | 'RESOLVING',
  at: string,
  step: string,
) {
  await applyStatus(tx, { marketId, status, at, eventId: `lifecycle:${marketId}:${step}`, by: BY });
}

/** Decides a PRICE_FEED or AI market, or says why it cannot. Never throws for want of a price or a model. */
export async function resolveAutomatically(
  deps: LifecycleDeps,
  market: ClaimedMarket,
): Promise<AutoResolution> {
  const mode: AccountMode = market.sandbox ? 'sandbox' : 'live';
  if (market.resolution_type === 'PRICE_FEED') return resolveByPrice(deps, market, mode);
  const outcomes = (await deps.db.query<{ label: string }>(sql.OUTCOME_LABELS, [market.id])).map(
    (o) => o.label,
  );
  try {
    const resolution = await deps.resolver.resolve(
      mode,
      { question: market.title, outcomes, context: market.description },
      { confidenceThreshold: DEFAULT_CONFIDENCE_THRESHOLD },
    );
    const { consensus } = resolution;
    const decided =
      consensus.status === 'COMPLETED' && consensus.canDetermine && consensus.winningOutcomeIndex !== null;
    const details = {
      method: 'ai',
      consensus: {
        status: consensus.status,
        winningOutcomeIndex: consensus.winningOutcomeIndex,
        confidence: consensus.confidence,
        agreement: consensus.agreement,
        canDetermine: consensus.canDetermine,
        validAnswers: consensus.validAnswers,
      },
      ...(decided ? {} : { reason: 'the models could not determine the outcome' }),
    };
    return decided && consensus.winningOutcomeIndex !== null
      ? { winner: consensus.winningOutcomeIndex, details, ai: { resolution, outcomes } }
      : { winner: null, details };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { winner: null, details: { method: 'ai', reason: `${err.code}: ${err.message}` } };
  }
}

async function resolveByPrice(
  deps: LifecycleDeps,
  market: ClaimedMarket,
  mode: AccountMode,
): Promise<AutoResolution> {
  const symbol = market.price_symbol ?? '';
  const target = market.price_target ?? 0;
  const tolerance = market.price_tolerance ?? 0;
  const base = {
    method: 'price_feed',
    symbol,
    condition: market.price_condition,
    targetPrice: target,
    tolerance,
  };
  const parsed = parseTarget(symbol);
  if (parsed.kind !== 'target')
    return { winner: null, details: { ...base, reason: 'the symbol cannot be priced' } };
  let price: number;
  try {
    const result = await deps.prices.price(parsed.target, mode, symbol);
    if (!result.isValid) {
      return { winner: null, details: { ...base, price: result.vwapPrice, reason: 'no valid price' } };
    }
    price = result.vwapPrice;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { winner: null, details: { ...base, reason: `no valid price (${err.code})` } };
  }
  const winner = priceOutcome(market.price_condition ?? 'above', price, target, tolerance);
  return {
    winner,
    details: {
      ...base,
      price,
      ...(winner === null ? { reason: 'the price is inside the tolerance band' } : {}),
    },
  };
}

/** `above`: Yes (0) beyond target + tolerance, No (1) below target − tolerance; `below` mirrors it. */
export function priceOutcome(
  condition: 'above' | 'below',
  price: number,
  target: number,
  tolerance: number,
): 0 | 1 | null {
  const high = price > target + tolerance;
  const low = price < target - tolerance;
  if (!high && !low) return null;
  return condition === 'above' ? (high ? 0 : 1) : low ? 0 : 1;
}
