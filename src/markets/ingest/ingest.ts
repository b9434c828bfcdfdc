import type { Database } from '../../db/database.js';
import type { ValidationProblem } from '../../errors.js';
import { isoUtc } from '../../lib/time.js';
import {
  applyChunk,
  byPhaseThenTime,
  type LineOutcome,
  type LineReason,
  sameBody,
  type Verdict,
} from './apply-chunk.js';

export type { LineOutcome, LineReason };

import { NOTIFY } from '../lifecycle/lifecycle-sql.js';
import { type MarketChanges, recordMarketChanges, type StreamedTrade } from '../log/market-log.js';
import { listedMarketsChanged } from '../read/list-cache.js';
import { type ParsedEvent, parseEventLine } from './events.js';

/**
 * Ingestion of platform events (docs/markets.md, "Ingestion"), shared by the CLI, the admin route
 * and the demo data. Every line is validated on its own; the valid ones are applied in chunks, one
 * transaction per chunk, and each event either applies whole or is refused whole.
 */

export interface LineReport {
  line: number;
  eventId: string | null;
  outcome: LineOutcome;
  reason: LineReason;
  message: string;
  problems?: ValidationProblem[];
}

export interface IngestReport {
  /** Non-blank lines read. */
  received: number;
  /** Recorded now: their state applied, or was already superseded by a newer event. */
  applied: number;
  /** Seen before with the same body: nothing to do. */
  skipped: number;
  /** Not applied (bad line, conflicting body, unknown market or order): see `reports`. */
  refused: number;
  /** One entry per skipped or refused line, by line number (at most MAX_REPORTS). */
  reports: LineReport[];
  reportsTruncated: boolean;
}

export const MAX_REPORTS = 1000;
/**
 * Events per transaction: large enough to amortise round trips and each statement's fixed work, small
 * enough to hold its locks briefly. A chunk's trades update each of their markets' totals, last prices
 * and hour and day candles once, whatever their number: with 5,000 rather than 1,000, a feed of 200
 * markets updated those rows a fifth as often, and trade ingestion was 1.26× as fast
 * (docs/performance.md#chunks-of-5000).
 */
const CHUNK_SIZE = 5000;

/** Ingests NDJSON text: one event a line; blank lines are ignored. */
export async function ingestText(db: Database, text: string): Promise<IngestReport> {
  return ingestLines(db, text.split(/\r?\n/));
}

export async function ingestLines(db: Database, lines: readonly string[]): Promise<IngestReport> {
  const report: IngestReport = {
    received: 0,
    applied: 0,
    skipped: 0,
    refused: 0,
    reports: [],
    reportsTruncated: false,
  };
  const note = (
    line: number,
    eventId: string | null,
    verdict: NonNullable<Verdict>,
    problems?: ValidationProblem[],
  ) => {
    if (verdict.outcome === 'skipped') report.skipped++;
    else report.refused++;
    if (report.reports.length >= MAX_REPORTS) {
      report.reportsTruncated = true;
      return;
    }
    report.reports.push({ line, eventId, ...verdict, ...(problems ? { problems } : {}) });
  };

  const firstById = new Map<string, ParsedEvent>();
  const valid: ParsedEvent[] = [];
  // Repeats of a line earlier in the same body: skipped, unless that line turns out refused.
  const repeats: { parsed: ParsedEvent; first: ParsedEvent }[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    report.received++;
    const result = parseEventLine(text, i + 1);
    if (!result.ok) {
      const message = result.problems.map((p) => `${p.path} ${p.message}`).join('; ');
      note(result.line, result.eventId, { outcome: 'refused', reason: 'invalid', message }, result.problems);
      return;
    }
    const { parsed } = result;
    const first = firstById.get(parsed.event.id);
    if (first) {
      const verdict = sameBody(first, parsed);
      if (verdict.outcome === 'skipped') repeats.push({ parsed, first });
      else note(parsed.line, parsed.event.id, verdict);
      return;
    }
    firstById.set(parsed.event.id, parsed);
    valid.push(parsed);
  });

  valid.sort(byPhaseThenTime);
  const refusedLines = new Map<number, NonNullable<Verdict>>();
  for (let i = 0; i < valid.length; i += CHUNK_SIZE) {
    const chunk = valid.slice(i, i + CHUNK_SIZE);
    const verdicts = await db.transaction(async (tx) => {
      const applied = await applyChunk(tx, chunk);
      await recordMarketChanges(tx, streamChanges(chunk, applied)); // the market stream (docs/streams.md#markets)
      await tx.query(NOTIFY); // the lifecycle worker looks at the changed markets' closing times
      return applied;
    });
    // The list caches of this process hear of it now; other processes by the database's notification.
    if (chunk.some((parsed) => parsed.event.type.startsWith('market.'))) listedMarketsChanged(db);
    chunk.forEach((parsed, j) => {
      const verdict = verdicts[j];
      if (verdict?.outcome === 'refused') refusedLines.set(parsed.line, verdict);
      if (verdict) note(parsed.line, parsed.event.id, verdict);
      else report.applied++;
    });
  }
  for (const { parsed, first } of repeats) {
    const refusal = refusedLines.get(first.line);
    note(
      parsed.line,
      parsed.event.id,
      refusal
        ? { ...refusal, message: `as line ${first.line}: ${refusal.message}` }
        : sameBody(first, parsed),
    );
  }
  report.reports.sort((a, b) => a.line - b.line);
  return report;
}

/** What the applied events of a chunk changed, as the market stream needs to know it. */
function streamChanges(chunk: ParsedEvent[], verdicts: Verdict[]): MarketChanges {
  const changes = { marketIds: new Set<string>(), orderIds: [] as string[], trades: [] as StreamedTrade[] };
  chunk.forEach(({ event, atMicros }, i) => {
    if (verdicts[i] !== null) return;
    if (event.type === 'market.created') changes.marketIds.add(event.market.id);
    else if (event.type === 'order.filled' || event.type === 'order.cancelled')
      changes.orderIds.push(event.orderId);
    else if (event.type === 'trade') {
      const { marketId, tradeId, outcome, price, shares } = event;
      changes.trades.push({
        marketId,
        tradeId,
        outcome,
        price,
        shares,
        // `at` to the millisecond, from what parsing computed: parsing the text again cost more
        // than the rest of the stream's work in Node.js (docs/performance.md#stream-rows-in-nodejs).
        at: isoUtc(Math.floor(atMicros / 1000)),
      });
    } else if (event.type !== 'position' && event.type !== 'stake') changes.marketIds.add(event.marketId);
  });
  return changes;
}
