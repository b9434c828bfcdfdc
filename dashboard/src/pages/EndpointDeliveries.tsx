import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, type Mode, ok } from '../api';
import { Done, ErrorNote, Table, useAction } from '../components/ui';
import { when } from '../format';

type Endpoint = Answer<'dashboardListWebhookEndpoints'>['endpoints'][number];
type Delivery = Answer<'dashboardListWebhookEndpointDeliveries'>['deliveries'][number];
type Status = Delivery['status'];

const STATUSES: Status[] = ['PENDING', 'SENDING', 'DELIVERED', 'CALLBACK_FAILED', 'STOPPED', 'CANCELLED'];
/** A page of the panel: every delivery comes with its attempts, so fewer than the API's 50. */
const PAGE = 10;
const HOUR = 3_600_000;
/** How far back recovery reaches (docs/webhooks.md#endpoint-health): the service refuses more. */
const RECOVER_DAYS = 7;

/**
 * One endpoint's deliveries (docs/webhooks.md#endpoint-health): newest first, filtered by status and
 * event type, more by the list's cursor, each with its attempts; and the recover form, which sends the
 * failed ones since a time again. Everything a delivery carries is shown as text.
 */
export function EndpointDeliveries({
  mode,
  endpoint,
  types,
}: {
  mode: Mode;
  endpoint: Endpoint;
  types: string[];
}) {
  const [status, setStatus] = useState<Status | ''>('');
  const [eventType, setEventType] = useState('');
  const [shown, setShown] = useState<Delivery[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const load = useAction();
  const page = (cursor: string | null) =>
    ok(
      api.GET('/dashboard/api/{mode}/webhooks/endpoints/{endpointId}/deliveries', {
        params: {
          path: { mode, endpointId: endpoint.id },
          query: {
            limit: PAGE,
            ...(status ? { status } : {}),
            ...(eventType ? { eventType } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
  useEffect(() => {
    let live = true;
    load.run(async () => {
      const first = await page(null);
      if (!live) return;
      setShown(first.deliveries);
      setNext(first.nextCursor);
    });
    return () => {
      live = false;
    };
  }, [mode, endpoint.id, status, eventType, version]);
  const label = `Deliveries to ${endpoint.url}`;
  return (
    <section class="detail endpoint-deliveries" aria-label={label}>
      <h3 class="wrap">{label}</h3>
      <div class="filters">
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event type{' '}
          <select value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
            <option value="">All</option>
            {types.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" disabled={load.busy} onClick={() => setVersion(version + 1)}>
          Refresh
        </button>
      </div>
      <ErrorNote error={load.error} />
      {shown && shown.length === 0 && (
        <p class="muted">No delivery{status || eventType ? ' matches' : ' yet'}.</p>
      )}
      {shown && shown.length > 0 && (
        <Table
          label="Endpoint deliveries"
          columns={[{ title: 'Delivery', wide: true }, 'Status', 'Attempts', 'Event', 'Created']}
        >
          {shown.map((delivery) => (
            <tr key={delivery.id}>
              <td class="mono wide">{delivery.id}</td>
              <td>{delivery.status}</td>
              <td>
                <Attempts delivery={delivery} />
              </td>
              <td>{delivery.type}</td>
              <td>{when(delivery.createdAt)}</td>
            </tr>
          ))}
        </Table>
      )}
      {next && (
        <button
          type="button"
          class="secondary"
          disabled={load.busy}
          onClick={() =>
            load.run(async () => {
              const more = await page(next);
              setShown([...(shown ?? []), ...more.deliveries]);
              setNext(more.nextCursor);
            })
          }
        >
          More deliveries
        </button>
      )}
      <Recover mode={mode} endpoint={endpoint} onRecovered={() => setVersion(version + 1)} />
    </section>
  );
}

/** A delivery's attempts, oldest first, folded under the count and the last answer. */
function Attempts({ delivery }: { delivery: Delivery }) {
  const last = delivery.lastStatusCode ?? delivery.lastError;
  return (
    <details class="attempts">
      <summary>
        {delivery.attemptCount} {delivery.attemptCount === 1 ? 'attempt' : 'attempts'}
        {last !== null ? `, last: ${last}` : ''}
      </summary>
      <ol aria-label={`Attempts of ${delivery.id}`}>
        {delivery.attempts.map((attempt) => (
          <li key={attempt.attempt}>
            {when(attempt.at)}:{' '}
            {attempt.statusCode !== null ? `status ${attempt.statusCode}` : (attempt.error ?? 'no answer')} in{' '}
            {attempt.latencyMs} ms
          </li>
        ))}
      </ol>
    </details>
  );
}

/** `YYYY-MM-DDTHH:MM` in UTC, as a datetime-local field holds it (the page shows UTC times). */
function utcField(time: number): string {
  return new Date(time).toISOString().slice(0, 16);
}

function Recover({
  mode,
  endpoint,
  onRecovered,
}: {
  mode: Mode;
  endpoint: Endpoint;
  onRecovered: () => void;
}) {
  const [since, setSince] = useState(() => utcField(Date.now() - 24 * HOUR));
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  return (
    <form
      class="inline-form recover"
      onSubmit={(event) => {
        event.preventDefault();
        act.run(async () => {
          setDone(null);
          const recovered = await ok(
            api.POST('/dashboard/api/{mode}/webhooks/endpoints/{endpointId}/recover', {
              params: { path: { mode, endpointId: endpoint.id } },
              body: { since: new Date(`${since}:00Z`).toISOString() },
            }),
          );
          setDone(
            `${recovered.queued} failed ${recovered.queued === 1 ? 'delivery' : 'deliveries'} since ${when(recovered.since)} sent again.`,
          );
          onRecovered();
        });
      }}
    >
      <label>
        Send failed deliveries again since (UTC, at most {RECOVER_DAYS} days ago){' '}
        <input
          type="datetime-local"
          required
          value={since}
          onInput={(e) => setSince(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={act.busy}>
        Recover
      </button>
      <div class="wrap">
        <Done text={done} />
        <ErrorNote error={act.error} />
      </div>
    </form>
  );
}
