import { useState } from 'preact/hooks';
import { api, inMode, type Mode, ok, type Transaction, type UsageReport } from '../api';
import { UsageChart } from '../components/Chart';
import { Card, ErrorNote, num, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { daysAgo, entryKind, entryPurpose, operationName, usd, when } from '../format';

type Grouping = UsageReport['groupBy'];
const GROUPINGS: { value: Grouping; label: string }[] = [
  { value: 'day', label: 'Per day' },
  { value: 'operation', label: 'Per operation' },
  { value: 'key', label: 'Per key' },
];

/** Spend and paid requests over a chosen range, drawn and tabled; the ledger with its CSV export. */
export function Usage({ mode }: { mode: Mode }) {
  const [from, setFrom] = useState(daysAgo(29));
  const [to, setTo] = useState(daysAgo(-1));
  const [groupBy, setGroupBy] = useState<Grouping>('day');
  const usage = useData(
    () =>
      ok(
        api.GET('/dashboard/api/{mode}/account/usage', {
          params: { path: { mode }, query: { from, to, groupBy } },
        }),
      ),
    [mode, from, to, groupBy],
  );
  // Keys by id, for the ledger's "Key" column (a person reads names, not ids).
  const keys = useData(() => ok(api.GET('/dashboard/api/{mode}/keys', inMode(mode))), [mode]);
  const keyNames = new Map((keys.data?.keys ?? []).map((key) => [key.id, key.name]));
  const report = usage.data;
  return (
    <>
      <Card title="Spend and requests">
        <form class="filters" onSubmit={(event) => event.preventDefault()}>
          <label>
            From <input type="date" value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To (exclusive) <input type="date" value={to} onChange={(e) => setTo(e.currentTarget.value)} />
          </label>
          <fieldset class="tabs">
            <legend class="hidden">Group by</legend>
            {GROUPINGS.map((g) => (
              <button
                key={g.value}
                type="button"
                class={g.value === groupBy ? 'tab active' : 'tab'}
                aria-pressed={g.value === groupBy}
                onClick={() => setGroupBy(g.value)}
              >
                {g.label}
              </button>
            ))}
          </fieldset>
        </form>
        <ErrorNote error={usage.error} />
        {report && (
          <>
            <p>
              <strong>{usd(report.totals.spendUsd)}</strong> spent on{' '}
              <strong>{report.totals.requests}</strong> paid requests ({usd(report.totals.chargedUsd)}{' '}
              charged, {usd(report.totals.refundedUsd)} refunded).
            </p>
            {report.groupBy === 'day' && <UsageChart rows={report.rows} />}
            <Table
              label="Usage"
              columns={[
                groupBy === 'day' ? 'Day' : groupBy === 'operation' ? 'Operation' : 'Key',
                num('Requests'),
                num('Charged'),
                num('Refunded'),
                num('Spend'),
              ]}
            >
              {report.rows
                .filter((row) => groupBy !== 'day' || row.requests > 0 || row.refundedUsd !== '0.00')
                .map((row) => (
                  <tr key={row.group}>
                    <td>{groupLabel(report.groupBy, row)}</td>
                    <td class="num">{row.requests}</td>
                    <td class="num">{usd(row.chargedUsd)}</td>
                    <td class="num">{usd(row.refundedUsd)}</td>
                    <td class="num">{usd(row.spendUsd)}</td>
                  </tr>
                ))}
            </Table>
          </>
        )}
      </Card>
      <Ledger mode={mode} from={from} to={to} keyNames={keyNames} />
    </>
  );
}

/** A row's group as a person reads it: the day, the operation in words, the key's name. */
function groupLabel(groupBy: Grouping, row: UsageReport['rows'][number]): string {
  if (groupBy === 'operation') return operationName(row.group);
  if (groupBy === 'key') return row.label ?? (row.group || 'No key (operator, dashboard)');
  return row.group;
}

/** The ledger, newest first, a page at a time; the CSV holds the whole range. */
function Ledger({
  mode,
  from,
  to,
  keyNames,
}: {
  mode: Mode;
  from: string;
  to: string;
  keyNames: Map<string, string>;
}) {
  const [entries, setEntries] = useState<Transaction[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const load = useAction();
  const range = { from: `${from}T00:00:00Z`, to: `${to}T00:00:00Z` };
  const page = (startingAfter?: string) =>
    ok(
      api.GET('/dashboard/api/{mode}/account/transactions', {
        params: { path: { mode }, query: { ...range, limit: 50, startingAfter } },
      }),
    );
  useData(async () => {
    const first = await page();
    setEntries(first.transactions);
    setNext(first.nextStartingAfter);
  }, [mode, from, to]);
  const more = () =>
    load.run(async () => {
      const following = await page(next ?? undefined);
      setEntries((shown) => [...shown, ...following.transactions]);
      setNext(following.nextStartingAfter);
    });
  return (
    <Card title="Ledger">
      <p>
        <a href={`/dashboard/api/${mode}/transactions.csv?${new URLSearchParams(range)}`} download>
          Export CSV
        </a>
      </p>
      <Table label="Ledger" columns={['Time', 'Kind', 'What', num('Amount'), num('Balance'), 'Key']}>
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td>{when(entry.createdAt)}</td>
            <td>{entryKind(entry.kind)}</td>
            <td>{entryPurpose(entry)}</td>
            <td class="num">{usd(entry.amountUsd)}</td>
            <td class="num">{usd(entry.balanceAfterUsd)}</td>
            <td title={entry.keyId ?? undefined}>
              {entry.keyId ? (keyNames.get(entry.keyId) ?? entry.keyId) : '—'}
            </td>
          </tr>
        ))}
      </Table>
      {next && (
        <button type="button" class="secondary" disabled={load.busy} onClick={more}>
          Load more
        </button>
      )}
      <ErrorNote error={load.error} />
    </Card>
  );
}
