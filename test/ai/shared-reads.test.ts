import { describe, expect, it } from 'vitest';
import type { SibylData } from '../../src/ai/index.js';
import { createResolver } from '../../src/ai/resolver.js';
import { sharedReads } from '../../src/ai/tools/shared-reads.js';
import { ManualClock } from '../../src/lib/clock.js';
import { testConfig } from '../helpers/context.js';

/**
 * The four models of one resolution share their reads of Sibyl's data (docs/ai.md#sibyls-tools):
 * the same price or market asked by several of them is read once; each call still gets its answer
 * and its evidence item; a failed read is read again by the next call; another resolution reads on
 * its own.
 */

const NOW = '2026-06-15T12:20:00Z';

/** Stored data that counts its reads; `failures` reads of a price throw first. */
function countingData(failures = 0) {
  const reads: string[] = [];
  let failing = failures;
  const data: SibylData = {
    async price(symbol, at) {
      reads.push(`price ${symbol} ${at.toISOString()}`);
      await new Promise((resolve) => setImmediate(resolve));
      if (failing > 0) {
        failing--;
        throw new Error('connection refused');
      }
      return { kind: 'no_data', symbol };
    },
    async market(id) {
      reads.push(`market ${id}`);
      return null;
    },
  };
  return { data, reads };
}

describe('one resolution’s reads of Sibyl’s data', () => {
  it('four sandbox models calling sibyl_price for the same instant make one read, and each vote cites it', async () => {
    const { data, reads } = countingData();
    const resolver = createResolver(testConfig().ai, new ManualClock(NOW), data);
    const question = {
      question: 'Did SOL trade above 100 USD on 2026-06-15?',
      outcomes: ['Yes', 'No'],
      context: '[sandbox:price=SOL@2026-06-15T07:30:00Z] [sandbox:evidence=none]',
    };
    const { votes } = await resolver.resolve('sandbox', question, { confidenceThreshold: 0.5 });
    expect(reads).toEqual(['price SOL 2026-06-15T07:30:00.000Z']);
    expect(votes).toHaveLength(4);
    for (const vote of votes) {
      expect(vote.evidence).toEqual([
        {
          kind: 'sibyl',
          tool: 'sibyl_price',
          input: { symbol: 'SOL', at: '2026-06-15T07:30:00Z' },
          output: expect.objectContaining({ status: 'no_data', symbol: 'SOL' }),
        },
      ]);
    }
    // The next resolution reads again: nothing is kept beyond the one that asked.
    await resolver.resolve('sandbox', question, { confidenceThreshold: 0.5 });
    expect(reads).toHaveLength(2);
  });

  it('shares a read per price instant and per market; a failed read is read again by the next call', async () => {
    const { data, reads } = countingData(1);
    const shared = sharedReads(data);
    const at = new Date('2026-06-15T07:30:00Z');
    const [first, joined] = await Promise.allSettled([shared.price('SOL', at), shared.price('SOL', at)]);
    expect(first.status).toBe('rejected');
    expect(joined.status).toBe('rejected');
    expect(reads).toHaveLength(1);
    await expect(shared.price('SOL', at)).resolves.toEqual({ kind: 'no_data', symbol: 'SOL' });
    await expect(shared.price('SOL', at)).resolves.toEqual({ kind: 'no_data', symbol: 'SOL' });
    await shared.price('SOL', new Date('2026-06-15T07:31:00Z'));
    await shared.price('BTC', at);
    await Promise.all([shared.market('m-1'), shared.market('m-1'), shared.market('m-2')]);
    expect(reads).toEqual([
      'price SOL 2026-06-15T07:30:00.000Z',
      'price SOL 2026-06-15T07:30:00.000Z',
      'price SOL 2026-06-15T07:31:00.000Z',
      'price BTC 2026-06-15T07:30:00.000Z',
      'market m-1',
      'market m-2',
    ]);
  });
});
