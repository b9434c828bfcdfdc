import { useState } from 'preact/hooks';
import { type Answer, api, type Mode, ok, type RequestBody } from '../api';
import { Card, CopyButton, Done, ErrorNote, RowAction, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { when } from '../format';
import { EndpointDeliveries } from './EndpointDeliveries';

type Endpoint = Answer<'dashboardListWebhookEndpoints'>['endpoints'][number];
type EventType = Answer<'listWebhookEventTypes'>['eventTypes'][number];

/**
 * Registered endpoints for account events (docs/webhooks.md#account-events): the list, a banner
 * when one is disabled, each one's deliveries and their recovery (EndpointDeliveries.tsx), the form,
 * and a new secret shown once (after creating or rotating).
 */
export function Endpoints({ mode }: { mode: Mode }) {
  const list = useData(
    () => ok(api.GET('/dashboard/api/{mode}/webhooks/endpoints', { params: { path: { mode } } })),
    [mode],
  );
  const catalog = useData(() => ok(api.GET('/api/v1/webhooks/event-types')), []);
  const act = useAction();
  const [secret, setSecret] = useState<{ url: string; value: string; note?: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [watched, setWatched] = useState<string | null>(null);
  const watchedEndpoint = list.data?.endpoints.find((endpoint) => endpoint.id === watched);
  const byEndpoint = (endpoint: Endpoint) => ({ params: { path: { mode, endpointId: endpoint.id } } });
  const subject = (endpoint: Endpoint) => `endpoint-${endpoint.id}`;
  const disabled = list.data?.endpoints.filter((endpoint) => !endpoint.enabled) ?? [];
  const change = (endpoint: Endpoint, enabled: boolean) =>
    act.run(async () => {
      await ok(
        api.PATCH('/dashboard/api/{mode}/webhooks/endpoints/{endpointId}', {
          ...byEndpoint(endpoint),
          body: { enabled },
        }),
      );
      setDone(enabled ? `Enabled ${endpoint.url}.` : `Disabled ${endpoint.url}: no new event is sent to it.`);
      list.reload();
    });
  return (
    <>
      {disabled.length > 0 && (
        <p class="warning wrap" role="alert">
          {disabled.length === 1 ? 'An endpoint is disabled' : `${disabled.length} endpoints are disabled`}:{' '}
          {disabled
            .map((endpoint) => `${endpoint.url} (${endpoint.disabledReason ?? 'disabled'})`)
            .join(', ')}
          . No event is sent to it until you enable it again.
        </p>
      )}
      {secret && (
        <Card title="Signing secret of the endpoint">
          <p class="warning wrap" role="status">
            Copy the secret of {secret.url} now: you will not see it again.
          </p>
          <output class="secret mono" aria-label="Endpoint signing secret">
            {secret.value}
          </output>
          {secret.note && <p class="note">{secret.note}</p>}
          <CopyButton text={secret.value} label="Copy secret" />{' '}
          <button type="button" class="secondary" onClick={() => setSecret(null)}>
            Done
          </button>
        </Card>
      )}
      <Card title="Endpoints">
        <p class="muted">
          Account events (deposits, balance alerts, jobs, resolutions, keys) are posted to these URLs, signed
          with each endpoint’s own secret (docs/webhooks.md#account-events).
        </p>
        <ErrorNote error={list.error ?? act.error} />
        <div class="wrap">
          <Done text={done} />
        </div>
        {list.data && list.data.endpoints.length === 0 && <p class="muted">None yet: add one below.</p>}
        {list.data && list.data.endpoints.length > 0 && (
          <Table
            label="Webhook endpoints"
            columns={['URL', 'Events', 'Status', 'Description', 'Created', '']}
          >
            {list.data.endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <td class="mono url" id={subject(endpoint)}>
                  {endpoint.url}
                </td>
                <td>{endpoint.eventTypes.includes('*') ? 'all' : endpoint.eventTypes.join(', ')}</td>
                <td>
                  {endpoint.enabled
                    ? 'enabled'
                    : `disabled${endpoint.disabledReason ? ` (${endpoint.disabledReason})` : ''}`}
                </td>
                <td>{endpoint.description ?? '—'}</td>
                <td>{when(endpoint.createdAt)}</td>
                <td class="actions">
                  <RowAction
                    label={watched === endpoint.id ? 'Hide deliveries' : 'Deliveries'}
                    subject={subject(endpoint)}
                    onClick={() => setWatched(watched === endpoint.id ? null : endpoint.id)}
                  />
                  <RowAction
                    label={endpoint.enabled ? 'Disable' : 'Enable'}
                    subject={subject(endpoint)}
                    busy={act.busy}
                    onClick={() => change(endpoint, !endpoint.enabled)}
                  />
                  <RowAction
                    label="Rotate secret"
                    subject={subject(endpoint)}
                    busy={act.busy}
                    onClick={() =>
                      act.run(async () => {
                        const rotated = await ok(
                          api.POST(
                            '/dashboard/api/{mode}/webhooks/endpoints/{endpointId}/rotate-secret',
                            byEndpoint(endpoint),
                          ),
                        );
                        setDone(null);
                        setSecret({
                          url: endpoint.url,
                          value: rotated.secret,
                          note: `The previous secret keeps signing until ${when(rotated.previousSecretValidUntil)}.`,
                        });
                        list.reload();
                      })
                    }
                  />
                  {confirming === endpoint.id ? (
                    <>
                      <RowAction
                        label="Yes, delete"
                        subject={subject(endpoint)}
                        busy={act.busy}
                        danger
                        onClick={() =>
                          act.run(async () => {
                            const deleted = await ok(
                              api.DELETE(
                                '/dashboard/api/{mode}/webhooks/endpoints/{endpointId}',
                                byEndpoint(endpoint),
                              ),
                            );
                            setConfirming(null);
                            setDone(
                              `Deleted ${endpoint.url}; ${deleted.cancelledDeliveries} waiting deliveries cancelled.`,
                            );
                            list.reload();
                          })
                        }
                      />
                      <RowAction
                        label="Keep it"
                        subject={subject(endpoint)}
                        onClick={() => setConfirming(null)}
                      />
                    </>
                  ) : (
                    <RowAction
                      label="Delete"
                      subject={subject(endpoint)}
                      onClick={() => setConfirming(endpoint.id)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        {watchedEndpoint && (
          <EndpointDeliveries
            key={watchedEndpoint.id}
            mode={mode}
            endpoint={watchedEndpoint}
            types={(catalog.data?.eventTypes ?? []).map((type) => type.name)}
          />
        )}
        <EndpointForm
          mode={mode}
          types={catalog.data?.eventTypes ?? []}
          onCreated={(created) => {
            setDone(null);
            setSecret({ url: created.url, value: created.secret });
            list.reload();
          }}
        />
      </Card>
      <Card title="Event types">
        <ErrorNote error={catalog.error} />
        {catalog.data && <Catalog types={catalog.data.eventTypes} />}
      </Card>
      <Alerts mode={mode} />
    </>
  );
}

function EndpointForm({
  mode,
  types,
  onCreated,
}: {
  mode: Mode;
  types: EventType[];
  onCreated: (created: { url: string; secret: string }) => void;
}) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [all, setAll] = useState(true);
  const [chosen, setChosen] = useState<string[]>([]);
  const act = useAction();
  const toggle = (name: string) =>
    setChosen(chosen.includes(name) ? chosen.filter((n) => n !== name) : [...chosen, name]);
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        act.run(async () => {
          const created = await ok(
            api.POST('/dashboard/api/{mode}/webhooks/endpoints', {
              params: { path: { mode } },
              body: {
                url,
                eventTypes: all
                  ? ['*']
                  : (chosen as RequestBody<'dashboardCreateWebhookEndpoint'>['eventTypes']),
                ...(description ? { description } : {}),
              },
            }),
          );
          setUrl('');
          setDescription('');
          onCreated(created);
        });
      }}
    >
      <h3>Add an endpoint</h3>
      <div class="inline-form">
        <label>
          Endpoint URL{' '}
          <input
            type="url"
            required
            value={url}
            placeholder="https://example.com/hooks/sibyl"
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </label>
        <label>
          Description{' '}
          <input value={description} maxLength={256} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
      </div>
      <fieldset>
        <legend>Event types</legend>
        <label>
          <input type="checkbox" checked={all} onChange={() => setAll(!all)} /> All, present and future
        </label>
        {!all &&
          types.map((type) => (
            <label key={type.name} class="check">
              <input
                type="checkbox"
                checked={chosen.includes(type.name)}
                onChange={() => toggle(type.name)}
              />{' '}
              <span class="mono">{type.name}</span>
            </label>
          ))}
      </fieldset>
      <button type="submit" disabled={act.busy || (!all && chosen.length === 0)}>
        Add endpoint
      </button>
      <ErrorNote error={act.error} />
    </form>
  );
}

function Catalog({ types }: { types: EventType[] }) {
  return (
    <dl class="catalog">
      {types.map((type) => (
        <div key={type.name}>
          <dt class="mono">{type.name}</dt>
          <dd>
            {type.description}
            <details>
              <summary>Schema of its data</summary>
              <pre class="mono">{JSON.stringify(type.schema, null, 2)}</pre>
            </details>
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Up to three low-balance thresholds (docs/webhooks.md#balance-alerts). */
function Alerts({ mode }: { mode: Mode }) {
  const settings = useData(
    () => ok(api.GET('/dashboard/api/{mode}/account/alerts', { params: { path: { mode } } })),
    [mode],
  );
  const [edited, setEdited] = useState<string[] | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const act = useAction();
  const shown = edited ?? settings.data?.lowBalanceUsd ?? [];
  const fields = [0, 1, 2].map((i) => shown[i] ?? '');
  return (
    <Card title="Balance alerts">
      <p class="muted">
        A <span class="mono">balance.low</span> event is sent once when the balance falls below a threshold,
        again only after it was back above it. At most three; leave a field empty to drop it.
      </p>
      <ErrorNote error={settings.error ?? act.error} />
      <Done text={done} />
      {settings.data && (
        <form
          class="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            act.run(async () => {
              const lowBalanceUsd = [
                ...new Set(
                  fields
                    .map((v) => v.trim())
                    .filter(Boolean)
                    .map(usdAmount),
                ),
              ].sort((a, b) => Number(b) - Number(a));
              const saved = await ok(
                api.PUT('/dashboard/api/{mode}/account/alerts', {
                  params: { path: { mode } },
                  body: { lowBalanceUsd },
                }),
              );
              setEdited(saved.lowBalanceUsd);
              setDone(
                saved.lowBalanceUsd.length
                  ? `Alerts below ${saved.lowBalanceUsd.map((v) => `$${v}`).join(', ')}.`
                  : 'Low-balance alerts are off.',
              );
              settings.reload();
            });
          }}
        >
          {fields.map((value, i) => (
            <label key={i}>
              Threshold {i + 1} (USD){' '}
              <input
                inputMode="decimal"
                value={value}
                placeholder="5.00"
                onInput={(e) => {
                  const next = [...fields];
                  next[i] = e.currentTarget.value;
                  setEdited(next);
                }}
              />
            </label>
          ))}
          <button type="submit" disabled={act.busy}>
            Save alerts
          </button>
        </form>
      )}
    </Card>
  );
}

/** `5` → `5.00`, `5.5` → `5.50`: the API takes 2 to 6 fraction digits; anything else it refuses itself. */
function usdAmount(value: string): string {
  if (/^\d+$/.test(value)) return `${value}.00`;
  if (/^\d+\.\d$/.test(value)) return `${value}0`;
  return value;
}
