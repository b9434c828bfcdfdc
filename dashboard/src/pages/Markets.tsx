import { useEffect, useState } from 'preact/hooks';
import { api, type MarketItem, type MarketList, type Mode, ok } from '../api';
import { Card, ErrorNote, num, Table } from '../components/ui';
import { useData } from '../data';
import { usd } from '../format';
import { href, type Location } from '../router';
import { Cost, type MarketSummary, MarketView, percent, price } from './MarketView';

/**
 * Markets: a search box, a sort, the list a page at a time, and one market at its own address
 * (`/dashboard/{mode}/markets/{id}`): its chart per outcome and latest trades, kept live by the market
 * stream (docs/dashboard.md#market-data). The page a builder copies from: every read is a plain
 * call of the API's route (here its dashboard twin, with the session), and every read is priced —
 * the page shows what each cost, and the header the balance it left.
 */

type SortKey = 'createdAt' | 'closesAt' | 'volume' | 'volume24h' | 'liquidity' | 'bettors' | 'relevance';
const SORTS: { value: SortKey; label: string }[] = [
  { value: 'createdAt', label: 'Newest' },
  { value: 'closesAt', label: 'Closing soon' },
  { value: 'volume', label: 'Volume' },
  { value: 'volume24h', label: 'Volume, 24 h' },
  { value: 'liquidity', label: 'Liquidity' },
  { value: 'bettors', label: 'Bettors' },
  { value: 'relevance', label: 'Relevance' },
];
/** Each sort key's own default order (docs/markets.md#search-and-sort). */
const defaultOrder = (sort: SortKey) => (sort === 'closesAt' ? 'asc' : 'desc');
const PAGE_SIZE = 20;

interface ListQuery {
  q?: string;
  sort: SortKey;
  order: 'asc' | 'desc';
  cursor?: string;
}

function listMarkets(mode: Mode, query: ListQuery) {
  return ok(
    api.GET('/dashboard/api/{mode}/markets', {
      params: { path: { mode }, query: { ...query, pageSize: PAGE_SIZE } },
    }),
  );
}

interface Props {
  mode: Mode;
  /** The market of the address, if one is open. */
  market?: string | undefined;
  navigate: (to: Location) => void;
  onBalanceChange: () => void;
}

export function Markets({ mode, market: openId, navigate, onBalanceChange }: Props) {
  const [search, setSearch] = useState('');
  const [q, setQ] = useState('');
  const [sort, setSort] = useState<SortKey>('volume');
  const [order, setOrder] = useState<'asc' | 'desc'>('desc');
  // The sort chosen before a search made it relevance, to return to when the search is cleared.
  const [sortBefore, setSortBefore] = useState<SortKey | null>(null);
  // The cursors of the pages read so far: the last is the page shown (undefined: the first).
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  // The list item a market was opened from: its view needs no read of its own.
  const [opened, setOpened] = useState<MarketItem | null>(null);
  // A market's address opened directly reads no list until the list is asked for.
  const [listWanted, setListWanted] = useState(openId === undefined);
  useEffect(() => {
    if (openId === undefined) setListWanted(true);
  }, [openId]);
  const cursor = cursors.at(-1);
  const list = useData(async () => {
    if (!listWanted) return null;
    const page = await listMarkets(mode, {
      ...(q ? { q } : {}),
      sort,
      order,
      ...(cursor ? { cursor } : {}),
    });
    onBalanceChange();
    return page;
  }, [mode, q, sort, order, cursor, listWanted]);

  const chooseSort = (next: SortKey) => {
    setSort(next);
    setOrder(defaultOrder(next));
    setSortBefore(null);
    setCursors([undefined]);
  };
  // As the API does: a search sorts by relevance; cleared, the sort before it comes back.
  const submitSearch = (text: string) => {
    setQ(text);
    setCursors([undefined]);
    if (text && !q) {
      setSortBefore(sort);
      setSort('relevance');
      setOrder(defaultOrder('relevance'));
    } else if (!text && q && sortBefore) {
      setSort(sortBefore);
      setOrder(defaultOrder(sortBefore));
      setSortBefore(null);
    }
  };

  return (
    <>
      <div hidden={openId !== undefined}>
        <Card title="Markets">
          <form
            class="filters"
            onSubmit={(event) => {
              event.preventDefault();
              submitSearch(search.trim());
            }}
          >
            <label>
              Search <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
            </label>
            <button type="submit">Search</button>
            <label>
              Sort{' '}
              <select value={sort} onChange={(e) => chooseSort(e.currentTarget.value as SortKey)}>
                {SORTS.map((s) => (
                  <option key={s.value} value={s.value}>
                    {s.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Order{' '}
              <select
                value={order}
                onChange={(e) => {
                  setOrder(e.currentTarget.value as 'asc' | 'desc');
                  setCursors([undefined]);
                }}
              >
                <option value="desc">Descending</option>
                <option value="asc">Ascending</option>
              </select>
            </label>
          </form>
          <ErrorNote error={list.error} />
          {list.data && (
            <MarketTable
              page={list.data}
              hrefOf={(market) => href({ mode, page: 'markets', item: market.id })}
              first={(cursors.length - 1) * PAGE_SIZE + 1}
              onOpen={(market) => {
                setOpened(market);
                navigate({ mode, page: 'markets', item: market.id });
              }}
            />
          )}
          {list.data && (cursors.length > 1 || list.data.nextCursor) && (
            <div class="actions pager">
              <button
                type="button"
                class="secondary"
                disabled={cursors.length === 1}
                onClick={() => setCursors(cursors.slice(0, -1))}
              >
                Previous page
              </button>
              <button
                type="button"
                class="secondary"
                disabled={!list.data.nextCursor}
                onClick={() => list.data?.nextCursor && setCursors([...cursors, list.data.nextCursor])}
              >
                Next page
              </button>
            </div>
          )}
        </Card>
      </div>
      {openId !== undefined && (
        <OpenMarket
          key={`${mode}:${openId}`}
          mode={mode}
          id={openId}
          known={opened?.id === openId ? opened : null}
          onBack={() => navigate({ mode, page: 'markets' })}
          onBalanceChange={onBalanceChange}
        />
      )}
    </>
  );
}

function MarketTable({
  page,
  first,
  hrefOf,
  onOpen,
}: {
  page: MarketList;
  hrefOf: (market: MarketItem) => string;
  /** The position of the page's first market in the whole list (1 on the first page). */
  first: number;
  onOpen: (market: MarketItem) => void;
}) {
  return (
    <>
      <Cost answer={page} />
      {page.markets.length > 0 && (
        <p class="note" role="status">
          Markets {first}–{first + page.markets.length - 1} of {page.total}.
        </p>
      )}
      <div class="market-list">
        <Table
          label="Markets"
          columns={[
            'Market',
            { title: 'Status', wide: true },
            'Outcomes: probability (last price)',
            num('Volume'),
            { ...num('24 h'), wide: true },
          ]}
        >
          {page.markets.map((market) => (
            <tr key={market.id} data-market={market.id}>
              <td class="market-title">
                <a
                  href={hrefOf(market)}
                  onClick={(event) => {
                    event.preventDefault();
                    onOpen(market);
                  }}
                >
                  {market.title}
                </a>
              </td>
              <td class="wide">{market.status}</td>
              <td>
                {market.outcomes
                  .map((o) => `${o.label} ${percent(o.probability)} (${price(o.lastPrice)})`)
                  .join(' · ')}
              </td>
              <td class="num">{market.volumeUsd === null ? '—' : usd(market.volumeUsd.toFixed(2))}</td>
              <td class="num wide">
                {market.volume24hUsd === null ? '—' : usd(market.volume24hUsd.toFixed(2))}
              </td>
            </tr>
          ))}
        </Table>
      </div>
      {page.markets.length === 0 && <p>No market matches.</p>}
    </>
  );
}

/**
 * The market of the address: the list's item when it was opened from the list, else read (the
 * API's market detail, billed as the API bills it) — a reload or a shared link shows it.
 */
function OpenMarket({
  mode,
  id,
  known,
  onBack,
  onBalanceChange,
}: {
  mode: Mode;
  id: string;
  known: MarketSummary | null;
  onBack: () => void;
  onBalanceChange: () => void;
}) {
  const [market, setMarket] = useState<MarketSummary | null>(known);
  const [read, setRead] = useState<{ costUsd: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (known) return;
    ok(api.GET('/dashboard/api/{mode}/markets/{id}', { params: { path: { mode, id } } })).then((detail) => {
      onBalanceChange();
      setRead(detail);
      setMarket({
        id: detail.id,
        title: detail.title,
        outcomes: detail.outcomes.map(({ index, label, lastPrice, probability }) => ({
          index,
          label,
          lastPrice,
          probability,
        })),
      });
    }, setError);
  }, [mode, id]);
  return (
    <>
      <p>
        <a
          href={href({ mode, page: 'markets' })}
          onClick={(event) => {
            event.preventDefault();
            onBack();
          }}
        >
          ← All markets
        </a>
      </p>
      <ErrorNote error={error} />
      {read && <Cost answer={read} />}
      {market && <MarketView mode={mode} market={market} onBalanceChange={onBalanceChange} />}
    </>
  );
}
