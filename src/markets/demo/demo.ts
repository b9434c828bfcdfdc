import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { sandboxMidPrice } from '../../prices/index.js';
import { type IngestReport, ingestLines } from '../ingest/ingest.js';
import { crowdOf, generator, marketGenerator, type Random } from './demo-random.js';
import { DEMO_CREATORS, DEMO_CURATORS, DEMO_TEMPLATES, type DemoTemplate } from './demo-templates.js';

/**
 * Demo data (`sibyl markets demo`, and a brand-new embedded database on first start): a few dozen
 * sandbox markets of every status and resolution type, with books, trades, positions and curators,
 * generated from a seed and loaded through the ingestion path like any platform's events. The same
 * seed at the same hour gives the same events; times are relative to the clock's current hour.
 */

export const DEFAULT_DEMO_SEED = 1;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SOL = 1_000_000_000;

type Event = Record<string, unknown>;

export function demoMarketId(seed: number, n: number): string {
  return `demo-${seed}-${String(n).padStart(2, '0')}`;
}

function slugOf(title: string, seed: number): string {
  const base = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 120);
  return seed === DEFAULT_DEMO_SEED ? base : `${base}-s${seed}`;
}

const dateText = (ms: number) =>
  new Date(ms).toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    year: 'numeric',
    timeZone: 'UTC',
  });
const iso = (ms: number) => new Date(ms).toISOString();
const clampBps = (bps: number) => Math.max(100, Math.min(9900, Math.round(bps / 10) * 10));

/** A probability per outcome that sums to 1, leaning towards one favourite. */
function beliefs(random: Random, n: number): number[] {
  const weights = Array.from({ length: n }, () => 0.2 + random.next());
  const favourite = random.int(0, n - 1);
  weights[favourite] = (weights[favourite] as number) * 2.5;
  const sum = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / sum);
}

/**
 * A price-feed market's odds follow the sandbox feed: the further the price is beyond the target
 * (in the condition's direction), the likelier Yes; so resolved demo markets agree with the feed.
 */
function feedBelief(feed: NonNullable<DemoTemplate['feed']>, at: number): number[] {
  const price = sandboxMidPrice(feed.symbol, at);
  const distance = (price - feed.targetPrice) / feed.targetPrice;
  const yes = 1 / (1 + Math.exp(-12 * (feed.condition === 'above' ? distance : -distance)));
  const clamped = Math.min(0.95, Math.max(0.05, yes));
  return [clamped, 1 - clamped];
}

/** A trade before its seller is settled (emitTrades). */
interface PlannedTrade {
  tradeId: string;
  at: number;
  outcome: number;
  price: number;
  shares: number;
  buyer: string;
  seller: string;
}

interface MarketPlan {
  id: string;
  template: DemoTemplate;
  outcomes: string[];
  createdAt: number;
  closesAt: number;
  /** Trading ends at close, or now for markets still open. */
  tradingEnds: number;
  belief: number[];
}

function plan(random: Random, seed: number, n: number, template: DemoTemplate, now: number): MarketPlan {
  const outcomes = template.outcomes ?? ['Yes', 'No'];
  const createdAt = now - random.int(4, 40) * DAY - random.int(0, 23) * HOUR;
  const age = now - createdAt;
  const closesAt = (() => {
    switch (template.status) {
      case 'OPEN':
      case 'DRAFT':
        return now + random.int(2, 60) * DAY + random.int(0, 23) * HOUR;
      case 'CLOSED':
        return now - random.int(1, 8) * HOUR;
      default:
        return createdAt + Math.floor(age * (0.5 + random.next() * 0.4));
    }
  })();
  const tradingEnds = Math.min(now, closesAt);
  const belief = beliefs(random, outcomes.length);
  return {
    id: demoMarketId(seed, n),
    template,
    outcomes,
    createdAt,
    closesAt,
    tradingEnds,
    belief: template.feed ? feedBelief(template.feed, tradingEnds) : belief,
  };
}

/** Every event of one market, from its creation to its current status. */
function marketEvents(
  random: Random,
  seed: number,
  m: MarketPlan,
  creators: string[],
  traders: string[],
): Event[] {
  let counter = 0;
  const events: Event[] = [];
  const emit = (type: string, at: number, fields: Event) => {
    counter += 1;
    events.push({ id: `${m.id}-e${String(counter).padStart(4, '0')}`, type, at: iso(at), ...fields });
  };
  const t = m.template;
  const crowd = crowdOf(seed, m.id, traders);
  const creatorIndex = random.int(0, creators.length - 1);
  emit('market.created', m.createdAt, {
    sandbox: true,
    market: {
      id: m.id,
      slug: slugOf(t.title.replace('{date}', dateText(m.closesAt)), seed),
      title: t.title.replace('{date}', dateText(m.closesAt)),
      description:
        `${t.title.replace('{date}', dateText(m.closesAt))} A sandbox demo market: its orders, trades, positions and ` +
        'stakes are generated. Resolution follows the rules of its resolution type.',
      category: t.category,
      imageUrl: `https://picsum.photos/seed/${m.id}/640/360`,
      marketType: m.outcomes.length === 2 && !t.outcomes ? 'BINARY' : 'CATEGORICAL',
      outcomes: m.outcomes,
      closesAt: iso(m.closesAt),
      feeBps: random.pick([50, 100, 150, 200, 250]),
      lockPeriodSeconds: random.pick([86_400, 3 * 86_400, 7 * 86_400, 14 * 86_400]),
      creator: { wallet: creators[creatorIndex], username: DEMO_CREATORS[creatorIndex] ?? null },
      resolution: t.feed ? { type: 'PRICE_FEED', ...t.feed } : { type: t.resolution },
    },
  });
  if (t.status === 'DRAFT') {
    emit('market.status', m.createdAt + 1000, { marketId: m.id, status: 'DRAFT' });
    return events;
  }
  const span = m.tradingEnds - m.createdAt;
  const when = (from: number) => from + Math.floor(random.next() * (m.tradingEnds - from));

  // Trades around each outcome's belief, a few in the last day for markets still trading.
  const trades: PlannedTrade[] = [];
  const tradeCount = t.status === 'CANCELLED' ? random.int(3, 10) : random.int(15, 60);
  for (let k = 0; k < tradeCount; k++) {
    const outcome = random.int(0, m.outcomes.length - 1);
    const price = clampBps((m.belief[outcome] as number) * 10_000 + (random.next() - 0.5) * 800);
    const shares = random.int(1, 400) * 50_000_000;
    const buyer = random.pick(crowd);
    let seller = random.pick(crowd);
    if (seller === buyer) seller = crowd[(crowd.indexOf(buyer) + 1) % crowd.length] as string;
    const recent = t.status === 'OPEN' && k < 4;
    const at = recent
      ? m.tradingEnds - random.int(1, 23 * 60) * 60_000
      : m.createdAt + Math.floor(random.next() * span);
    trades.push({ tradeId: `${m.id}-t${k}`, at, outcome, price, shares, buyer, seller });
  }
  if (t.status !== 'CANCELLED') trades.push(...priceWalk(seed, m, crowd));
  emitTrades(seed, m, trades, emit);

  // The book: bids below and asks above each outcome's belief; some orders partly filled or cancelled.
  const orderCount = random.int(8, 36);
  const tradingOn = t.status === 'OPEN';
  for (let k = 0; k < orderCount; k++) {
    const outcome = random.int(0, m.outcomes.length - 1);
    const side = random.next() < 0.5 ? 'bid' : 'ask';
    const mid = (m.belief[outcome] as number) * 10_000;
    const offset = random.int(1, 25) * 20;
    const orderId = `${m.id}-o${k}`;
    const placedAt = m.createdAt + Math.floor(random.next() * span);
    const shares = random.int(1, 200) * 100_000_000;
    emit('order.placed', placedAt, {
      marketId: m.id,
      orderId,
      wallet: random.pick(crowd),
      outcome,
      side,
      price: clampBps(side === 'bid' ? mid - offset : mid + offset),
      shares: String(shares),
    });
    const fate = random.next();
    if (!tradingOn || fate < 0.15) emit('order.cancelled', when(placedAt), { orderId });
    else if (fate < 0.3) emit('order.filled', when(placedAt), { orderId });
    else if (fate < 0.5)
      emit('order.filled', when(placedAt), { orderId, shares: String(Math.floor(shares / 2)) });
  }

  // Curators: a few stakes, sometimes a tie, sometimes one withdrawn.
  const stakers = random.int(2, 9);
  let previous = 0;
  for (let k = 0; k < stakers; k++) {
    const curator = random.int(0, DEMO_CURATORS.length - 1);
    const amount = k > 0 && random.next() < 0.15 ? previous : random.int(1, 400) * (SOL / 2);
    previous = amount;
    const at = m.createdAt + Math.floor(random.next() * span);
    const fields = {
      marketId: m.id,
      wallet: curatorWallet(seed, curator),
      username: DEMO_CURATORS[curator] ?? null,
    };
    emit('stake', at, { ...fields, amount: String(amount) });
    if (random.next() < 0.1) emit('stake', when(at), { ...fields, amount: '0' });
  }

  // Status history.
  const winner = m.belief.indexOf(Math.max(...m.belief));
  const close = m.closesAt;
  if (t.status === 'CANCELLED') {
    emit('market.status', close, { marketId: m.id, status: 'CANCELLED' });
  } else if (t.status !== 'OPEN') {
    emit('market.status', close, { marketId: m.id, status: 'CLOSED' });
    if (t.status !== 'CLOSED') emit('market.status', close + HOUR, { marketId: m.id, status: 'RESOLVING' });
    if (t.status === 'FINALIZED') {
      emit('market.resolved', close + 2 * HOUR, {
        marketId: m.id,
        winningOutcomeIndex: winner,
        details: { note: 'demo resolution', resolutionType: t.resolution },
      });
    }
  }
  return events;
}

/** Days of trades before a demo market stops trading, so its chart has a shape (docs/markets.md#demo-data). */
export const DEMO_CHART_DAYS = 3;

/**
 * The last DEMO_CHART_DAYS of trading as a price walk per outcome — a trade every 10 to 40 minutes,
 * drifting around the outcome's belief — so every chart of a first start has data. Its own
 * generator (seeded by the seed and the market), so the rest of the demo is as it was.
 */
function priceWalk(seed: number, m: MarketPlan, traders: readonly string[]): PlannedTrade[] {
  const walk = marketGenerator(seed, m.id);
  const prices = m.belief.map((b) => b * 10_000);
  const trades: PlannedTrade[] = [];
  let at = Math.max(m.createdAt + 60_000, m.tradingEnds - DEMO_CHART_DAYS * DAY);
  for (let k = 0; ; k++) {
    at += walk.int(10, 40) * 60_000 + walk.int(0, 59) * 1000;
    if (at >= m.tradingEnds) return trades;
    const outcome = walk.int(0, m.outcomes.length - 1);
    const belief = (m.belief[outcome] as number) * 10_000;
    const price = clampBps(
      (prices[outcome] as number) + (belief - (prices[outcome] as number)) * 0.05 + (walk.next() - 0.5) * 300,
    );
    prices[outcome] = price;
    const buyer = walk.pick(traders);
    let seller = walk.pick(traders);
    if (seller === buyer) seller = traders[(traders.indexOf(buyer) + 1) % traders.length] as string;
    const shares = walk.int(1, 200) * 50_000_000;
    trades.push({ tradeId: `${m.id}-w${k}`, at, outcome, price, shares, buyer, seller });
  }
}

/**
 * Emits a market's trades in `at` order (then tradeId), applying each to the positions as it goes:
 * the buyer gains the shares and wagers ⌊shares × price ÷ 10,000⌋, the seller loses the shares,
 * never below zero (a seller without enough shares writes the rest). Most sells come from a
 * current holder of the outcome (a generator of its own picks one), so some positions sell out.
 * Then one `position` event per wallet and outcome that ever held shares — its final shares and
 * wager, dated by the last trade that changed it — so positions, holders and bettors are exactly
 * what the trades imply (docs/markets.md#demo-data).
 */
function emitTrades(
  seed: number,
  m: MarketPlan,
  trades: PlannedTrade[],
  emit: (type: string, at: number, fields: Event) => void,
): void {
  const sells = marketGenerator(seed, m.id, 'sell');
  const held = new Map<
    string,
    { wallet: string; outcome: number; shares: number; wagered: number; at: number }
  >();
  const ordered = [...trades].sort((a, b) => a.at - b.at || (a.tradeId < b.tradeId ? -1 : 1));
  for (const trade of ordered) {
    const { outcome, shares, buyer } = trade;
    const holders = [...held.values()].filter(
      (p) => p.outcome === outcome && p.shares > 0 && p.wallet !== buyer,
    );
    const seller = holders.length > 0 && sells.next() < 0.7 ? sells.pick(holders).wallet : trade.seller;
    emit('trade', trade.at, {
      marketId: m.id,
      tradeId: trade.tradeId,
      outcome,
      price: trade.price,
      shares: String(shares),
      buyer,
      seller,
    });
    const key = `${buyer}:${outcome}`;
    const bought = held.get(key) ?? { wallet: buyer, outcome, shares: 0, wagered: 0, at: trade.at };
    bought.shares += shares;
    bought.wagered += Math.floor((shares * trade.price) / 10_000);
    bought.at = trade.at;
    held.set(key, bought);
    const sold = held.get(`${seller}:${outcome}`);
    if (sold && sold.shares > 0) {
      sold.shares = Math.max(0, sold.shares - shares);
      sold.at = trade.at;
    }
  }
  for (const p of held.values()) {
    emit('position', p.at, {
      marketId: m.id,
      wallet: p.wallet,
      outcome: p.outcome,
      shares: String(p.shares),
      wagered: String(p.wagered),
    });
  }
}

function curatorWallet(seed: number, index: number): string {
  return generator(seed * 1000 + index + 7).wallet();
}

/** The demo's events for `seed`, relative to the hour `clock` is in. */
export function demoEvents(seed: number, clock: Clock): Event[] {
  const random = generator(seed);
  const now = Math.floor(clock.now().getTime() / HOUR) * HOUR;
  const creators = DEMO_CREATORS.map(() => random.wallet());
  const traders = Array.from({ length: 60 }, () => random.wallet());
  const events: Event[] = [];
  DEMO_TEMPLATES.forEach((template, i) => {
    const m = plan(random, seed, i + 1, template, now);
    events.push(...marketEvents(random, seed, m, creators, traders));
  });
  return events;
}

export interface DemoReport {
  seed: number;
  markets: number;
  alreadyLoaded: boolean;
  ingestion: IngestReport | null;
}

/**
 * Loads the demo markets of `seed` through ingestion, unless they are there already (their events
 * are dated from the hour they were made, so loading them again later would only conflict).
 */
export async function loadDemoMarkets(
  db: Database,
  clock: Clock,
  seed = DEFAULT_DEMO_SEED,
): Promise<DemoReport> {
  const markets = DEMO_TEMPLATES.length;
  const [loaded] = await db.query('SELECT 1 FROM markets WHERE id = $1', [demoMarketId(seed, 1)]);
  if (loaded) return { seed, markets, alreadyLoaded: true, ingestion: null };
  const lines = demoEvents(seed, clock).map((e) => JSON.stringify(e));
  return { seed, markets, alreadyLoaded: false, ingestion: await ingestLines(db, lines) };
}
