/**
 * The formulas of docs/markets.md ("Scores"): a creator's reputation, a market's credibility and
 * the curators' estimated APY. Pure functions of stored figures, so the docs and the tests can
 * state exact values.
 */

const LAMPORTS_PER_SOL = 1_000_000_000;
const DAY_MS = 86_400_000;

/**
 * A creator's reputation, 0–1,000: 600 × the share of their decided markets that were finalized
 * rather than cancelled (counted with one of each added, so a newcomer starts at half), plus 400 ×
 * their experience (finalized markets, full at 20).
 */
export function creatorScore(markets: { finalized: number; cancelled: number }): number {
  const { finalized, cancelled } = markets;
  const reliability = (finalized + 1) / (finalized + cancelled + 2);
  const experience = Math.min(finalized, 20) / 20;
  return Math.round(600 * reliability + 400 * experience);
}

/**
 * A market's credibility, 0–1,000: half its creator's reputation (up to 500), plus the curators'
 * backing — up to 300 for the stake (log10 of 1 + staked SOL, full at 999 SOL) and up to 200 for
 * how many curators stake (full at 20).
 */
export function marketCredibility(input: {
  creatorScore: number;
  totalStakedLamports: bigint;
  stakerCount: number;
}): number {
  const stakedSol = Number(input.totalStakedLamports) / LAMPORTS_PER_SOL;
  const depth = Math.min(1, Math.log10(1 + stakedSol) / 3);
  const breadth = Math.min(1, input.stakerCount / 20);
  return Math.round(0.5 * input.creatorScore + 300 * depth + 200 * breadth);
}

/**
 * Curators' estimated APY in percent (2 decimals): the fees the market's volume has paid so far
 * (volume × feeBps ÷ 10,000), per day of trading (from creation to now, or to closesAt once
 * closed; at least one day), over a year, divided by the stake. 0 without stake. It assumes the
 * fees go to the curators and the pace of trading holds.
 */
export function estimatedApy(input: {
  totalVolumeLamports: bigint;
  feeBps: number;
  totalStakedLamports: bigint;
  createdAt: Date;
  closesAt: Date;
  now: Date;
}): number {
  if (input.totalStakedLamports <= 0n) return 0;
  const end = Math.min(input.now.getTime(), input.closesAt.getTime());
  const days = Math.max(1, (end - input.createdAt.getTime()) / DAY_MS);
  const fees = (Number(input.totalVolumeLamports) * input.feeBps) / 10_000;
  const apy = ((fees / days) * 365 * 100) / Number(input.totalStakedLamports);
  return Math.round(apy * 100) / 100;
}
