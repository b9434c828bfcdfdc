import { outcomeProbabilities, round6 } from '../../lib/probability.js';
import type { MarketStatus, ResolutionType } from '../ingest/events.js';
import type { AiPredictionBody, MarketDetailBody, PriceFeedBody } from '../schemas.js';
import { creatorScore, estimatedApy, marketCredibility } from './scores.js';

/**
 * Assembles the extended detail from the rows `service.ts` reads (statements in `sql.ts`) and the prices of the moment: the
 * orderbook, probability and statistics rules of docs/markets.md, as pure functions.
 */

export interface MarketRow {
  id: string;
  slug: string;
  title: string;
  description: string;
  category: string;
  image_url: string | null;
  market_type: 'BINARY' | 'CATEGORICAL';
  closes_at: Date;
  fee_bps: number;
  lock_period_seconds: number;
  creator_wallet: string;
  creator_username: string | null;
  resolution_type: ResolutionType;
  price_symbol: string | null;
  price_condition: 'above' | 'below' | null;
  price_target: number | null;
  price_tolerance: number | null;
  sandbox: boolean;
  status: MarketStatus;
  winning_outcome_index: number | null;
  resolved_at: Date | null;
  resolution_details: Record<string, unknown> | null;
  created_at: Date;
  outcome_labels: string[];
  finalized: number;
  cancelled: number;
  /** The official resolution's attestation (docs/attestations.md#which-resolution-is-official), if signed. */
  official_attestation: MarketDetailBody['resolution']['attestation'];
  official_votes: MarketDetailBody['resolution']['votes'];
}

export interface LevelRow {
  outcome_index: number;
  side: 'bid' | 'ask';
  price: number;
  shares: string;
  amount: string;
  orders: number;
  levels: number;
}

export interface PositionRow {
  outcome_index: number;
  positions: number;
  shares: string;
  wagered: string;
}

export interface TradeRow {
  trades: number;
  volume: string;
  recent_trades: number;
  recent_volume: string;
}

export interface CountRow {
  stakers: number;
  staked: string;
  holders: number;
  bettors: number;
}

export interface CuratorRow {
  wallet: string;
  username: string | null;
  amount: string;
}

export interface DetailRows {
  market: MarketRow;
  levels: LevelRow[];
  positions: PositionRow[];
  trades: TradeRow;
  lastPrices: { outcome_index: number; price: number | null }[];
  counts: CountRow;
  curators: CuratorRow[];
}

export interface DetailPrices {
  /** USD per SOL, or null when none could be obtained. */
  solUsd: number | null;
  priceFeed: PriceFeedBody | null;
  aiPrediction: AiPredictionBody | null;
}

const EMPTY_BID = 0;
const EMPTY_ASK = 10_000;

/**
 * Lamports (integer text) → SOL: the double nearest to the exact decimal, so it prints as the
 * decimal (1522800000 → 1.5228). Adding the whole and fractional parts as doubles printed float
 * noise (1.5228000000000002).
 */
export function toSol(lamports: string): number {
  const value = BigInt(lamports);
  const sign = value < 0n ? '-' : '';
  const abs = value < 0n ? -value : value;
  const fraction = (abs % 1_000_000_000n).toString().padStart(9, '0');
  return Number(`${sign}${abs / 1_000_000_000n}.${fraction}`);
}

/** How a market resolves, as `resolution.source` names it. */
export function resolutionSource(m: MarketRow): string {
  switch (m.resolution_type) {
    case 'PRICE_FEED':
      return `${m.price_symbol}:${m.price_condition}:${m.price_target}:${m.price_tolerance}`;
    case 'AI':
      return 'ai-consensus';
    case 'ADMIN':
      return 'admin';
    case 'MANUAL_VOTE':
      return 'community-vote';
  }
}

export function assembleDetail(rows: DetailRows, prices: DetailPrices, now: Date): MarketDetailBody {
  const { market: m } = rows;
  const usd = (lamports: string) => (prices.solUsd === null ? null : round6(toSol(lamports) * prices.solUsd));
  const money = (lamports: string) => ({ sol: toSol(lamports), usd: usd(lamports) });

  const orderbooks: MarketDetailBody['orderbooks'] = {};
  const best: { bestBid: number | null; bestAsk: number | null }[] = [];
  m.outcome_labels.forEach((_label, index) => {
    const level = (r: LevelRow) => {
      const value = money(r.amount);
      return {
        price: r.price,
        amount: r.amount,
        shares: r.shares,
        valueSol: value.sol,
        valueUsd: value.usd,
        orders: r.orders,
      };
    };
    const mine = rows.levels.filter((r) => r.outcome_index === index);
    const bids = mine.filter((r) => r.side === 'bid');
    const asks = mine.filter((r) => r.side === 'ask');
    const bestBid = bids[0]?.price ?? null;
    const bestAsk = asks[0]?.price ?? null;
    best.push({ bestBid, bestAsk });
    orderbooks[String(index)] = {
      bids: bids.map(level),
      asks: asks.map(level),
      spread: (bestAsk ?? EMPTY_ASK) - (bestBid ?? EMPTY_BID),
      bestBid: bestBid ?? EMPTY_BID,
      bestAsk: bestAsk ?? EMPTY_ASK,
      bidLevels: bids[0]?.levels ?? 0,
      askLevels: asks[0]?.levels ?? 0,
    };
  });

  const lastPrice = (index: number) => rows.lastPrices.find((r) => r.outcome_index === index)?.price ?? null;
  // The rule of docs/markets.md, shared with the market stream (lib/probability.ts).
  const probability = outcomeProbabilities(best.map((b, index) => ({ ...b, lastPrice: lastPrice(index) })));
  const positionsOf = (index: number) => rows.positions.find((r) => r.outcome_index === index);

  const outcomes = m.outcome_labels.map((label, index) => {
    const p = positionsOf(index);
    const wagered = p?.wagered ?? '0';
    return {
      index,
      label,
      totalShares: p?.shares ?? '0',
      totalWagered: wagered,
      totalWageredSol: toSol(wagered),
      totalWageredUsd: usd(wagered),
      lastPrice: lastPrice(index),
      probability: probability[index] ?? 0,
    };
  });

  const sum = (field: 'shares' | 'wagered') =>
    rows.positions.reduce((total, p) => total + BigInt(p[field]), 0n).toString();
  const totalWagered = sum('wagered');
  const { trades, counts } = rows;
  const creator = creatorScore({ finalized: m.finalized, cancelled: m.cancelled });
  const staked = BigInt(counts.staked);

  return {
    id: m.id,
    slug: m.slug,
    title: m.title,
    description: m.description,
    category: m.category,
    imageUrl: m.image_url,
    status: m.status,
    marketType: m.market_type,
    sandbox: m.sandbox,
    createdAt: m.created_at.toISOString(),
    closesAt: m.closes_at.toISOString(),
    outcomes,
    orderbooks,
    positionStats: {
      totalPositions: rows.positions.reduce((n, p) => n + p.positions, 0),
      totalShares: sum('shares'),
      uniqueHolders: counts.holders,
      totalWagered,
      totalWageredSol: toSol(totalWagered),
      totalWageredUsd: usd(totalWagered),
      outcomeBreakdown: outcomes.map((o) => ({
        index: o.index,
        label: o.label,
        totalWagered: o.totalWagered,
        totalWageredSol: o.totalWageredSol,
        totalWageredUsd: o.totalWageredUsd,
      })),
    },
    curatorStaking: {
      totalStaked: counts.staked,
      totalStakedUsd: usd(counts.staked),
      stakerCount: counts.stakers,
      estimatedApy: estimatedApy({
        totalVolumeLamports: BigInt(trades.volume),
        feeBps: m.fee_bps,
        totalStakedLamports: staked,
        createdAt: m.created_at,
        closesAt: m.closes_at,
        now,
      }),
      lockPeriodSeconds: m.lock_period_seconds,
      topCurators: rows.curators.map((c, i) => ({
        rank: i + 1,
        wallet: c.wallet,
        username: c.username,
        stakedAmount: c.amount,
        stakedAmountUsd: usd(c.amount),
      })),
    },
    prediction: { priceFeed: prices.priceFeed, aiPrediction: prices.aiPrediction },
    tradingStats: {
      totalVolume: trades.volume,
      totalVolumeSol: toSol(trades.volume),
      totalVolumeUsd: usd(trades.volume),
      totalTrades: trades.trades,
      totalBettors: counts.bettors,
      last24hVolume: trades.recent_volume,
      last24hVolumeSol: toSol(trades.recent_volume),
      last24hVolumeUsd: usd(trades.recent_volume),
      last24hTrades: trades.recent_trades,
    },
    resolution: {
      type: m.resolution_type,
      source: resolutionSource(m),
      metadata: {
        type: m.resolution_type,
        symbol: m.price_symbol,
        condition: m.price_condition,
        targetPrice: m.price_target,
        tolerance: m.price_tolerance,
      },
      resolvedAt: m.resolved_at?.toISOString() ?? null,
      winningOutcomeIndex: m.winning_outcome_index,
      details: m.resolution_details,
      attestation: m.official_attestation ?? null,
      votes: m.official_votes ?? null,
    },
    creator: { wallet: m.creator_wallet, username: m.creator_username, credibilityScore: creator },
    credibilityScore: marketCredibility({
      creatorScore: creator,
      totalStakedLamports: staked,
      stakerCount: counts.stakers,
    }),
    feeBps: m.fee_bps,
    solPriceUsd: prices.solUsd,
    computedAt: now.toISOString(),
  };
}
