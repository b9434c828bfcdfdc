import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SETTING_NAMES } from '../src/config.js';

/**
 * Every setting the service reads — the core's, the mechanisms' and each feature's fragment, as
 * `config.ts` composes them — has a table row in docs/operations.md#configuration, or, for the price
 * venues, in docs/prices.md#configuration, which that table links (docs/architecture.md#configuration).
 */

const read = (doc: string) =>
  readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../docs', doc), 'utf8');

/**
 * The settings of `names` named in no table row (`| … \`NAME\` …`) of `docs`: its own row, or its
 * successor's (`Its old name \`WEBHOOK_STREAMS_PER_KEY\` still works`). The numbered model slots
 * (`AI_MODEL_1_ID` …) have one row each, `AI_MODEL_n_ID`.
 */
const undocumented = (names: readonly string[], docs: string[]) => {
  const rows = docs.flatMap((doc) => doc.split('\n').filter((line) => line.startsWith('|')));
  return names.filter((name) => !rows.some((row) => row.includes(`\`${name.replace(/_\d_/, '_n_')}\``)));
};

describe('the settings in docs/', () => {
  it('every setting the service reads has its row in docs/operations.md or docs/prices.md', () => {
    expect(SETTING_NAMES.length).toBeGreaterThan(50);
    expect(undocumented(SETTING_NAMES, [read('operations.md'), read('prices.md')])).toEqual([]);
  });

  it('the check itself sees a setting without a row, and not one merely mentioned in prose', () => {
    const doc =
      '| `PORT` | `3000` | the API port |\nSet `DB_POOL_SIZE` higher when …\n| `AI_MODEL_n_ID` | | |';
    expect(undocumented(['PORT', 'DB_POOL_SIZE', 'AI_MODEL_2_ID', 'NO_SUCH_SETTING'], [doc])).toEqual([
      'DB_POOL_SIZE',
      'NO_SUCH_SETTING',
    ]);
  });
});
