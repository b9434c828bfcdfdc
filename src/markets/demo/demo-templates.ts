import type { MarketStatus, ResolutionType } from '../ingest/events.js';

/**
 * The demo markets (`sibyl markets demo`): questions a Solana prediction-market platform would
 * list, across categories, every resolution type and every status. `{date}` becomes the closing
 * date. PRICE_FEED targets sit near the sandbox feed's levels, so their books look plausible.
 */
export interface DemoTemplate {
  title: string;
  category: string;
  resolution: ResolutionType;
  status: MarketStatus;
  /** Absent: a BINARY Yes/No market. */
  outcomes?: string[];
  feed?: { symbol: string; condition: 'above' | 'below'; targetPrice: number; tolerance: number };
}

export const DEMO_CREATORS = [
  'oracle_owl',
  'solana_sage',
  'degen_dave',
  'chartist',
  'macro_mia',
  'stats_sam',
  'pundit_pat',
  null,
] as const;

export const DEMO_CURATORS = [
  'curator_ace',
  'validator_vic',
  'staked_sue',
  'lamport_lou',
  'epoch_eve',
  null,
  'gossip_gus',
  'turbine_tia',
  null,
  'sealevel_sal',
  'poh_pete',
  'bank_bea',
] as const;

const feed = (symbol: string, condition: 'above' | 'below', targetPrice: number, tolerance: number) => ({
  resolution: 'PRICE_FEED' as const,
  category: 'crypto',
  feed: { symbol, condition, targetPrice, tolerance },
});

export const DEMO_TEMPLATES: DemoTemplate[] = [
  { title: 'Will SOL trade above $200 on {date}?', status: 'OPEN', ...feed('SOL', 'above', 200, 0.5) },
  { title: 'Will BTC stay above $90,000 on {date}?', status: 'OPEN', ...feed('BTC', 'above', 90_000, 100) },
  { title: 'Will ETH fall below $3,000 by {date}?', status: 'OPEN', ...feed('ETH', 'below', 3_000, 5) },
  { title: 'Will JUP reach $1.00 by {date}?', status: 'OPEN', ...feed('JUP', 'above', 1, 0.005) },
  {
    title: 'Will BONK trade above $0.00003 on {date}?',
    status: 'CLOSED',
    ...feed('BONK', 'above', 0.00003, 2e-7),
  },
  {
    title: 'Will PYTH close below $0.30 on {date}?',
    status: 'RESOLVING',
    ...feed('PYTH', 'below', 0.3, 0.002),
  },
  { title: 'Will RAY trade above $3 on {date}?', status: 'FINALIZED', ...feed('RAY', 'above', 3, 0.01) },
  { title: 'Will ORCA trade above $4 on {date}?', status: 'CANCELLED', ...feed('ORCA', 'above', 4, 0.01) },
  { title: 'Will SOL fall below $120 by {date}?', status: 'FINALIZED', ...feed('SOL', 'below', 120, 0.5) },
  {
    title: 'Will BTC trade above $100,000 on {date}?',
    status: 'DRAFT',
    ...feed('BTC', 'above', 100_000, 100),
  },
  {
    title: 'Which team wins the World Cup final on {date}?',
    category: 'sports',
    resolution: 'AI',
    status: 'OPEN',
    outcomes: ['Brazil', 'France', 'Argentina', 'England', 'Another team'],
  },
  {
    title: 'Will the Fed cut rates at its meeting on {date}?',
    category: 'economy',
    resolution: 'AI',
    status: 'OPEN',
  },
  {
    title: 'Which chain has the most daily active addresses on {date}?',
    category: 'crypto',
    resolution: 'AI',
    status: 'OPEN',
    outcomes: ['Solana', 'Ethereum', 'Base', 'Another chain'],
  },
  {
    title: 'Will a spot SOL ETF be approved by {date}?',
    category: 'crypto',
    resolution: 'AI',
    status: 'OPEN',
  },
  {
    title: 'Will the weekend box office leader gross over $100M by {date}?',
    category: 'culture',
    resolution: 'AI',
    status: 'CLOSED',
  },
  {
    title: 'Which film wins Best Picture on {date}?',
    category: 'culture',
    resolution: 'AI',
    status: 'RESOLVING',
    outcomes: ['The Long Orbit', 'Quiet Harbour', 'Paper Kings', 'Another film'],
  },
  {
    title: 'Will global smartphone shipments grow this quarter (reported {date})?',
    category: 'tech',
    resolution: 'AI',
    status: 'FINALIZED',
  },
  {
    title: 'Will US inflation print below 3% on {date}?',
    category: 'economy',
    resolution: 'AI',
    status: 'OPEN',
  },
  {
    title: 'Will USDC supply on Solana exceed $10B by {date}?',
    category: 'crypto',
    resolution: 'AI',
    status: 'OPEN',
  },
  {
    title: 'Will the summer transfer window break the record fee by {date}?',
    category: 'sports',
    resolution: 'AI',
    status: 'CANCELLED',
  },
  {
    title: 'Will the hackathon receive over 500 submissions by {date}?',
    category: 'tech',
    resolution: 'ADMIN',
    status: 'OPEN',
  },
  {
    title: 'Will the community treasury proposal pass by {date}?',
    category: 'politics',
    resolution: 'ADMIN',
    status: 'OPEN',
  },
  {
    title: 'Will the validator client upgrade ship by {date}?',
    category: 'tech',
    resolution: 'ADMIN',
    status: 'CLOSED',
  },
  {
    title: 'Which category lists the most new markets by {date}?',
    category: 'culture',
    resolution: 'ADMIN',
    status: 'FINALIZED',
    outcomes: ['Crypto', 'Sports', 'Politics', 'Another category'],
  },
  {
    title: 'Will voter turnout exceed 60% on {date}?',
    category: 'politics',
    resolution: 'ADMIN',
    status: 'OPEN',
  },
  {
    title: 'Will the launchpad sale sell out by {date}?',
    category: 'crypto',
    resolution: 'ADMIN',
    status: 'RESOLVING',
  },
  {
    title: 'Best meme-coin mascot of the season, voted {date}?',
    category: 'culture',
    resolution: 'MANUAL_VOTE',
    status: 'OPEN',
    outcomes: ['Dog', 'Cat', 'Frog', 'Another mascot'],
  },
  {
    title: 'Will the DAO vote to lower fees by {date}?',
    category: 'politics',
    resolution: 'MANUAL_VOTE',
    status: 'OPEN',
  },
  {
    title: 'Which conference wins the league finals on {date}?',
    category: 'sports',
    resolution: 'MANUAL_VOTE',
    status: 'OPEN',
    outcomes: ['East', 'West'],
  },
  {
    title: 'Will the marathon world record fall by {date}?',
    category: 'sports',
    resolution: 'MANUAL_VOTE',
    status: 'CLOSED',
  },
  {
    title: 'Which wallet app wins the community poll on {date}?',
    category: 'tech',
    resolution: 'MANUAL_VOTE',
    status: 'FINALIZED',
    outcomes: ['Phantom', 'Solflare', 'Backpack', 'Another wallet'],
  },
  {
    title: 'Will the grants round fund 50 projects by {date}?',
    category: 'economy',
    resolution: 'MANUAL_VOTE',
    status: 'CANCELLED',
  },
  {
    title: 'Will the city approve the stadium plan by {date}?',
    category: 'politics',
    resolution: 'MANUAL_VOTE',
    status: 'DRAFT',
  },
  {
    title: 'Will the NFT floor of the flagship collection double by {date}?',
    category: 'crypto',
    resolution: 'AI',
    status: 'OPEN',
  },
  {
    title: 'Will the home team win the derby on {date}?',
    category: 'sports',
    resolution: 'ADMIN',
    status: 'OPEN',
  },
  {
    title: 'Will average Solana fees stay under $0.01 through {date}?',
    category: 'crypto',
    resolution: 'AI',
    status: 'RESOLVING',
  },
];
