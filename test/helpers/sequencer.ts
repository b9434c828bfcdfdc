import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification, type Vitest } from 'vitest/node';

/**
 * The files that take longest, longest first (docs/testing.md#where-the-time-goes): each starts
 * the real `sibyl`, a browser, or fills a database. Vitest orders a run by the durations it cached
 * from the last one, but a fresh clone has no cache and runs the largest files first, which left
 * a first start of `sibyl start` to begin four fifths of the way through and end the run alone.
 */
export const SLOWEST_FIRST = [
  'test/e2e/start.test.ts',
  'test/e2e/start-port-in-use.test.ts',
  'test/cli/operator-channel.test.ts',
  'test/e2e/data-dir-modes.test.ts',
  'test/db/migrate.test.ts',
  'test/markets/list-counts.test.ts',
  'test/retention/statistics.test.ts',
  'test/dashboard/browser-phone.test.ts',
  'test/cli/cli.test.ts',
  'test/markets/cli.test.ts',
  'test/limits/rate-limit.test.ts',
  'test/http/openapi.test.ts',
  'test/retention/retention.test.ts',
  'test/http/schema-samples.test.ts',
  'test/evaluation/evaluate.test.ts',
  'test/ai/billing.test.ts',
];

/** Vitest's order (cached durations, else file size), with the files above moved to the front. */
export class SlowestFirstSequencer extends BaseSequencer {
  constructor(ctx: Vitest) {
    super(ctx);
    // A file renamed or split fails here instead of silently running late again.
    for (const path of SLOWEST_FIRST)
      if (!existsSync(join(ctx.config.root, path)))
        throw new Error(`test/helpers/sequencer.ts lists ${path}, which does not exist`);
  }

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = SLOWEST_FIRST.indexOf(relative(this.ctx.config.root, spec.moduleId));
      return index === -1 ? SLOWEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the files not listed keep Vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
