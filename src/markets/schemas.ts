import Type, { type Static } from 'typebox';
import { EvidenceSchema } from '../ai/index.js';
import { AttestationSchema } from '../attestations/index.js';
import { NullableTimestamp, Timestamp } from '../http/schemas.js';
import { MARKET_STATUSES, RESOLUTION_TYPES } from './ingest/events.js';

/** The wire shapes of GET /markets and GET /markets/:id (docs/markets.md says how each is computed). */

const Lamports = (description: string) =>
  Type.String({ pattern: '^\\d+$', description: `${description}; lamports as an integer string` });
const Sol = (description: string) => Type.Number({ description: `${description}; lamports ÷ 10^9` });
const Usd = (description: string) =>
  Type.Union([Type.Number(), Type.Null()], {
    description: `${description}; SOL × the current SOL price in USD (6 decimals), null when no SOL price is available`,
  });
const Bps = (description: string) => Type.Integer({ minimum: 0, maximum: 10_000, description });

export const MarketStatusSchema = Type.Enum(MARKET_STATUSES, {
  description: 'DRAFT markets are never shown',
});
const ResolutionTypeSchema = Type.Enum(RESOLUTION_TYPES);

export const MarketListItem = Type.Object(
  {
    id: Type.String(),
    slug: Type.String({ description: 'Readable identifier; GET /markets/:id accepts it too' }),
    title: Type.String(),
    description: Type.String(),
    category: Type.String({ description: 'Free text set by the platform, e.g. crypto, sports' }),
    status: MarketStatusSchema,
    resolutionType: ResolutionTypeSchema,
    outcomes: Type.Array(
      Type.Object(
        {
          index: Type.Integer(),
          label: Type.String(),
          lastPrice: Type.Union([Bps('Price of the last trade'), Type.Null()], {
            description: 'Price of the outcome’s last trade, basis points; null before its first trade',
          }),
          probability: Type.Number({
            minimum: 0,
            maximum: 1,
            description:
              'As in the detail: mid of best bid and ask, else last price, else 1 ÷ outcomes; normalised',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    createdAt: Timestamp,
    closesAt: Timestamp,
    sandbox: Type.Boolean({ description: 'Sandbox (demo) market: prices from the sandbox feed' }),
    volumeUsd: Usd('All-time traded value (Σ shares × price ÷ 10,000 lamports)'),
    volume24hUsd: Usd('Traded value of the last 24 hours'),
    liquidityUsd: Usd('Value of every open order, both sides (Σ open shares × price ÷ 10,000 lamports)'),
  },
  { title: 'MarketSummary', additionalProperties: false },
);

export const MarketList = Type.Object(
  {
    markets: Type.Array(MarketListItem, {
      description: 'In the order of `sort` and `order` (default: newest createdAt first, then id)',
    }),
    total: Type.Integer({ description: 'Markets matching the filters, on every page' }),
    page: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'The page number; null when paging by cursor',
    }),
    pageSize: Type.Integer(),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` (same query) for the items after this page; null on the last page',
    }),
  },
  { additionalProperties: false },
);

const Outcome = Type.Object(
  {
    index: Type.Integer(),
    label: Type.String(),
    totalShares: Type.String({
      pattern: '^\\d+$',
      description: 'Shares held (positions with shares > 0), base units',
    }),
    totalWagered: Lamports('Wagered by those positions'),
    totalWageredSol: Sol('totalWagered'),
    totalWageredUsd: Usd('totalWagered'),
    lastPrice: Type.Union([Bps('Price of the last trade'), Type.Null()], {
      description: 'Price of the outcome’s last trade, basis points; null before its first trade',
    }),
    probability: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Mid of best bid and ask, else last price, else 1 ÷ outcomes; normalised to sum to 1',
    }),
  },
  { additionalProperties: false },
);

const Level = Type.Object(
  {
    price: Bps('Price level, basis points'),
    amount: Lamports('Value of the open shares at this level (shares × price ÷ 10,000)'),
    shares: Type.String({ pattern: '^\\d+$', description: 'Open shares at this level, base units' }),
    valueSol: Sol('amount'),
    valueUsd: Usd('amount'),
    orders: Type.Integer({ description: 'Open orders at this level' }),
  },
  { additionalProperties: false },
);

const Book = Type.Object(
  {
    bids: Type.Array(Level, { description: 'Best (highest) first; at most the configured depth' }),
    asks: Type.Array(Level, { description: 'Best (lowest) first; at most the configured depth' }),
    spread: Type.Integer({ description: 'bestAsk − bestBid, basis points' }),
    bestBid: Bps('Highest bid; 0 when there is none'),
    bestAsk: Bps('Lowest ask; 10,000 when there is none'),
    bidLevels: Type.Integer({ description: 'Price levels on the bid side, including those not shown' }),
    askLevels: Type.Integer({ description: 'Price levels on the ask side, including those not shown' }),
  },
  { additionalProperties: false },
);

const Breakdown = Type.Object(
  {
    index: Type.Integer(),
    label: Type.String(),
    totalWagered: Lamports('Wagered on this outcome'),
    totalWageredSol: Sol('totalWagered'),
    totalWageredUsd: Usd('totalWagered'),
  },
  { additionalProperties: false },
);

const Curator = Type.Object(
  {
    rank: Type.Integer({ minimum: 1, maximum: 5 }),
    wallet: Type.String(),
    username: Type.Union([Type.String(), Type.Null()]),
    stakedAmount: Lamports('The curator’s stake'),
    stakedAmountUsd: Usd('stakedAmount'),
  },
  { additionalProperties: false },
);

const PriceFeed = Type.Object(
  {
    currentPrice: Type.Union([Type.Number(), Type.Null()], {
      description: 'VWAP of `symbol` in USD when the detail was computed; null when it could not be priced',
    }),
    isValid: Type.Boolean({ description: 'Whether that VWAP is valid (enough agreeing sources)' }),
    targetPrice: Type.Number(),
    condition: Type.Enum(['above', 'below']),
    symbol: Type.String(),
    tolerance: Type.Number({ description: 'USD; prices within target ± tolerance do not resolve' }),
    lastUpdated: NullableTimestamp,
  },
  { additionalProperties: false },
);

const AiPrediction = Type.Object(
  {
    winningOutcomeIndex: Type.Union([Type.Integer(), Type.Null()]),
    confidence: Type.Number(),
    agreement: Type.Number(),
    canDetermine: Type.Boolean(),
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const MarketDetail = Type.Object(
  {
    id: Type.String(),
    slug: Type.String(),
    title: Type.String(),
    description: Type.String(),
    category: Type.String(),
    imageUrl: Type.Union([Type.String(), Type.Null()]),
    status: MarketStatusSchema,
    marketType: Type.Enum(['BINARY', 'CATEGORICAL']),
    sandbox: Type.Boolean({ description: 'Sandbox (demo) market: USD values from the sandbox feed' }),
    createdAt: Timestamp,
    closesAt: Timestamp,
    outcomes: Type.Array(Outcome),
    orderbooks: Type.Record(Type.String({ pattern: '^\\d+$' }), Book, {
      description: 'Keyed by outcome index (as a string)',
    }),
    positionStats: Type.Object(
      {
        totalPositions: Type.Integer({ description: 'Positions (holder × outcome) with shares > 0' }),
        totalShares: Type.String({ pattern: '^\\d+$' }),
        uniqueHolders: Type.Integer(),
        totalWagered: Lamports('Wagered by those positions'),
        totalWageredSol: Sol('totalWagered'),
        totalWageredUsd: Usd('totalWagered'),
        outcomeBreakdown: Type.Array(Breakdown),
      },
      { additionalProperties: false },
    ),
    curatorStaking: Type.Object(
      {
        totalStaked: Lamports('Sum of current stakes'),
        totalStakedUsd: Usd('totalStaked'),
        stakerCount: Type.Integer(),
        estimatedApy: Type.Number({ description: 'Percent a year; formula in docs/markets.md' }),
        lockPeriodSeconds: Type.Integer(),
        topCurators: Type.Array(Curator, { description: 'The 5 largest stakes; ties to the earlier stake' }),
      },
      { additionalProperties: false },
    ),
    prediction: Type.Object(
      {
        priceFeed: Type.Union([PriceFeed, Type.Null()], {
          description: 'PRICE_FEED markets; null otherwise',
        }),
        aiPrediction: Type.Union([AiPrediction, Type.Null()], {
          description: 'The latest AI consensus on an AI market; null when there is none',
        }),
      },
      { additionalProperties: false },
    ),
    tradingStats: Type.Object(
      {
        totalVolume: Lamports('Σ shares × price ÷ 10,000 over all trades'),
        totalVolumeSol: Sol('totalVolume'),
        totalVolumeUsd: Usd('totalVolume'),
        totalTrades: Type.Integer(),
        totalBettors: Type.Integer({ description: 'Distinct wallets that traded or hold a position' }),
        last24hVolume: Lamports('The same over trades of the last 24 hours'),
        last24hVolumeSol: Sol('last24hVolume'),
        last24hVolumeUsd: Usd('last24hVolume'),
        last24hTrades: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    resolution: Type.Object(
      {
        type: ResolutionTypeSchema,
        source: Type.String({ description: 'PRICE_FEED: <symbol>:<condition>:<target>:<tolerance>' }),
        metadata: Type.Object(
          {
            type: ResolutionTypeSchema,
            symbol: Type.Union([Type.String(), Type.Null()]),
            condition: Type.Union([Type.Enum(['above', 'below']), Type.Null()]),
            targetPrice: Type.Union([Type.Number(), Type.Null()]),
            tolerance: Type.Union([Type.Number(), Type.Null()]),
          },
          { additionalProperties: false },
        ),
        resolvedAt: NullableTimestamp,
        winningOutcomeIndex: Type.Union([Type.Integer(), Type.Null()]),
        details: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
          description: 'Status transitions (`transitions`) and how the market was resolved (`resolvedBy`)',
        }),
        attestation: Type.Union([AttestationSchema, Type.Null()], {
          description:
            'The official resolution: an AI market resolved by its lifecycle, signed as a market resolution ' +
            '(kind 3: request-id and market-id fields both the SHA-256 of the market id), the one a program ' +
            'settles on (docs/attestations.md#which-resolution-is-official). Null: not resolved so, or ' +
            'resolved otherwise since, or attestations off',
        }),
        votes: Type.Union(
          [
            Type.Array(
              Type.Object(
                {
                  model: Type.String({ description: '`<provider>/<model>`' }),
                  outcomeIndex: Type.Union([Type.Integer(), Type.Null()]),
                  confidence: Type.Union([Type.Number(), Type.Null()]),
                  evidence: Type.Array(EvidenceSchema),
                },
                { additionalProperties: false },
              ),
            ),
            Type.Null(),
          ],
          {
            description:
              'The votes of the official resolution, in slot order, with the evidence its attestation hashes: ' +
              '`evidenceHash(resolution)` of @sibyl/client recomputes the digest; null with `attestation`',
          },
        ),
      },
      { additionalProperties: false },
    ),
    creator: Type.Object(
      {
        wallet: Type.String(),
        username: Type.Union([Type.String(), Type.Null()]),
        credibilityScore: Type.Integer({ minimum: 0, maximum: 1000 }),
      },
      { additionalProperties: false },
    ),
    credibilityScore: Type.Integer({
      minimum: 0,
      maximum: 1000,
      description: 'From curator activity and creator reputation; formula in docs/markets.md',
    }),
    feeBps: Bps('Trading fee'),
    solPriceUsd: Type.Union([Type.Number(), Type.Null()], {
      description: 'The SOL price behind every …Usd value',
    }),
    computedAt: { ...Timestamp, description: 'When this detail was computed (it is cached for one minute)' },
  },
  { additionalProperties: false },
);

export type MarketDetailBody = Static<typeof MarketDetail>;
export type MarketListBody = Static<typeof MarketList>;
export type PriceFeedBody = Static<typeof PriceFeed>;
export type AiPredictionBody = Static<typeof AiPrediction>;
