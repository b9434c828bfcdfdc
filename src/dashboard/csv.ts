import type { Context } from '../context.js';
import { type HistoryQuery, listTransactions } from '../ledger/index.js';

/** The most entries one export holds; a longer ledger is exported a range at a time. */
export const MAX_CSV_ENTRIES = 50_000;

const COLUMNS = [
  'id',
  'createdAt',
  'kind',
  'amountUsd',
  'balanceAfterUsd',
  'operation',
  'requestId',
  'keyId',
  'reference',
  'refundOf',
  'memo',
] as const;

/**
 * One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. Text that a
 * spreadsheet would run as a formula (starting with =, +, -, @, tab or CR) is prefixed with `'`; the
 * amounts, which are the only fields that may rightly start with `-`, are numbers and left alone.
 */
function field(value: string | null, text: boolean): string {
  if (value === null) return '';
  const safe = text && /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The ledger entries matching `query`, oldest first, as CSV — read through the ledger's own list verb. */
export async function transactionsCsv(
  ctx: Context,
  accountId: string,
  query: Pick<HistoryQuery, 'kind' | 'from' | 'to'>,
): Promise<string> {
  const lines: string[] = [];
  let startingAfter: string | undefined;
  do {
    const page = await listTransactions(ctx, accountId, { ...query, limit: 100, startingAfter });
    for (const entry of page.transactions) {
      lines.push(
        COLUMNS.map((column) =>
          field(entry[column], column !== 'amountUsd' && column !== 'balanceAfterUsd'),
        ).join(','),
      );
    }
    startingAfter = page.nextStartingAfter ?? undefined;
  } while (startingAfter !== undefined && lines.length < MAX_CSV_ENTRIES);
  return `${[COLUMNS.join(','), ...lines.slice(0, MAX_CSV_ENTRIES).reverse()].join('\r\n')}\r\n`;
}
