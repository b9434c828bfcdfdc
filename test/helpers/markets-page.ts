import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Stage } from './dashboard-stage.js';

/** What the Markets page's browser tests read of the API and of the page (docs/dashboard.md#pages). */

export interface ListedMarket {
  id: string;
  title: string;
  status: string;
  outcomes: { index: number; label: string }[];
}

/** The API's answers, read with a key of its own (so not on the session's ledger). */
export function marketsApi(stage: () => Stage, key: () => string) {
  const api = async (path: string) => {
    const answer = await fetch(`${stage().base}/api/v1${path}`, {
      headers: { authorization: `Bearer ${key()}` },
    });
    expect(answer.status, path).toBe(200);
    return (await answer.json()) as Record<string, unknown>;
  };
  const listIds = async (query: string) =>
    ((await api(`/markets?${query}&pageSize=20`)).markets as ListedMarket[]).map((m) => m.id);
  return { api, listIds };
}

/** The session's charges without a key (the dashboard's reads), counted by operation. */
export async function chargesByOperation(stage: Stage): Promise<Record<string, number>> {
  const rows = await stage.ctx.database.db.query<{ operation: string; n: bigint }>(
    `SELECT operation, count(*) AS n FROM ledger_entries WHERE kind = 'charge' AND key_id IS NULL
      GROUP BY operation`,
  );
  return Object.fromEntries(rows.map((r) => [r.operation, Number(r.n)]));
}

/** The ids of the rows of the page's markets table, waiting until they are `expected`. */
export async function shownMarkets(page: Page, expected: string[]): Promise<string[]> {
  const rows = page.getByRole('table', { name: 'Markets' }).locator('tbody tr');
  const ids = () => rows.evaluateAll((all) => all.map((row) => row.getAttribute('data-market') as string));
  await expect.poll(ids).toEqual(expected);
  return ids();
}

/** Opens `title` from the page's markets table (its link): its market view. */
export async function openMarket(page: Page, title: string) {
  await page
    .getByRole('table', { name: 'Markets' })
    .getByRole('link', { name: title, exact: true })
    .first()
    .click();
  return marketView(page, title);
}

/** A market's view: the card headed by its title. */
export const marketView = (page: Page, title: string) =>
  page.locator('section.card').filter({ has: page.getByRole('heading', { name: title }) });
