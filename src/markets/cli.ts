import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../context.js';
import { type Output, UsageError } from '../lib/command-line.js';
import { DEFAULT_DEMO_SEED, loadDemoMarkets } from './demo/demo.js';
import { type IngestReport, ingestText } from './ingest/ingest.js';
import { resolveByAdmin } from './lifecycle/status.js';

export interface MarketsCommandArgs {
  positionals: string[];
  options: Record<string, string | boolean | undefined>;
  /** Where a relative FILE is read from: the caller's directory (the running service may run the command). */
  cwd?: string;
}

function summary(report: IngestReport): string {
  const lines = [
    `${report.received} events: ${report.applied} applied, ${report.skipped} skipped, ${report.refused} refused`,
    ...report.reports.map(
      (r) => `  line ${r.line}${r.eventId ? ` (${r.eventId})` : ''}: ${r.outcome}, ${r.reason}: ${r.message}`,
    ),
  ];
  if (report.reportsTruncated) lines.push('  … more lines; run with --json for the counts');
  return lines.join('\n');
}

/**
 * `sibyl markets ingest FILE | demo [--seed N] | resolve MARKET_ID OUTCOME` (docs/markets.md).
 * Returns false when the command did its work but something was refused (exit 1).
 */
export async function marketsCommand(
  ctx: Context,
  out: Output,
  action: string,
  args: MarketsCommandArgs,
): Promise<boolean> {
  switch (action) {
    case 'ingest': {
      const file = args.positionals[0];
      if (!file) throw new UsageError('missing FILE.ndjson');
      let bytes: Buffer;
      try {
        bytes = await readFile(resolve(args.cwd ?? '.', file));
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      let text: string;
      try {
        // As the admin route: bytes that are not UTF-8 are refused, not read as U+FFFD.
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new UsageError(`${file} is not UTF-8 text`);
      }
      const report = await ingestText(ctx.db, text);
      out.result({ file, ...report }, summary(report));
      return report.refused === 0;
    }
    case 'demo': {
      const seedText = args.options.seed;
      const seed = typeof seedText === 'string' ? Number(seedText) : DEFAULT_DEMO_SEED;
      if (!Number.isInteger(seed) || seed < 1 || seed > 1_000_000)
        throw new UsageError('--seed must be an integer from 1 to 1000000');
      const report = await loadDemoMarkets(ctx.db, ctx.clock, seed);
      const human = report.alreadyLoaded
        ? `The ${report.markets} demo markets of seed ${seed} are already loaded`
        : `Loaded ${report.markets} sandbox demo markets (seed ${seed}): ${summary(report.ingestion as IngestReport)}`;
      out.result({ ...report }, human);
      return report.alreadyLoaded || report.ingestion?.refused === 0;
    }
    case 'resolve': {
      const [market, outcome] = args.positionals;
      if (!market || outcome === undefined)
        throw new UsageError('usage: sibyl markets resolve MARKET_ID OUTCOME');
      const resolved = await resolveByAdmin(ctx, { market, outcome });
      out.result(
        { ...resolved },
        `Market ${resolved.marketId} is FINALIZED: outcome ${resolved.winningOutcomeIndex} (${resolved.winningOutcomeLabel})`,
      );
      return true;
    }
    default:
      throw new UsageError(`unknown markets action "${action}"`);
  }
}
