import { useState } from 'preact/hooks';
import { api, type Mode, ok } from '../api';
import { Card, CopyButton, Done, ErrorNote, num, RowAction, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { when } from '../format';
import { Endpoints } from './Endpoints';

/**
 * Endpoints for account events with the catalog and the balance alerts (Endpoints.tsx); deliveries
 * with their attempts, redelivery, a test event, and the account's callback signing secret.
 */
export function Webhooks({ mode }: { mode: Mode }) {
  const list = useData(
    () =>
      ok(
        api.GET('/dashboard/api/{mode}/webhooks/deliveries', {
          params: { path: { mode }, query: { pageSize: 50 } },
        }),
      ),
    [mode],
  );
  const [open, setOpen] = useState<string | null>(null);
  const act = useAction();
  const [url, setUrl] = useState('');
  const [outcome, setOutcome] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const byDelivery = (id: string) => ({ params: { path: { mode, deliveryId: id } } });
  return (
    <>
      <Endpoints mode={mode} />
      <Card title="Send a test webhook">
        <form
          class="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            act.run(async () => {
              const result = await ok(
                api.POST('/dashboard/api/{mode}/webhooks/test', {
                  params: { path: { mode } },
                  body: { callbackUrl: url },
                }),
              );
              setOutcome(
                result.delivered
                  ? `Delivered: ${result.statusCode} in ${result.latencyMs} ms`
                  : `Not delivered: ${result.error ?? `status ${result.statusCode}`}`,
              );
              list.reload();
            });
          }}
        >
          <label>
            Callback URL{' '}
            <input
              type="url"
              required
              value={url}
              placeholder="https://example.com/hooks/sibyl"
              onInput={(e) => setUrl(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={act.busy}>
            Send test webhook
          </button>
        </form>
        <Done text={outcome} />
      </Card>
      <Card title="Deliveries">
        <ErrorNote error={list.error ?? act.error} />
        <Done text={done} />
        {list.data && list.data.deliveries.length === 0 && <p class="muted">None yet.</p>}
        {list.data && list.data.deliveries.length > 0 && (
          <Table
            label="Webhook deliveries"
            columns={['Delivery', 'Type', 'Status', num('Attempts'), 'Last answer', 'Created', '']}
          >
            {list.data.deliveries.map((delivery) => (
              <tr key={delivery.id}>
                <td>
                  <button
                    type="button"
                    class="link mono"
                    id={`delivery-${delivery.id}`}
                    onClick={() => setOpen(open === delivery.id ? null : delivery.id)}
                  >
                    {delivery.id}
                  </button>
                </td>
                <td>{delivery.type}</td>
                <td>{delivery.status}</td>
                <td class="num">{delivery.attemptCount}</td>
                <td>{delivery.lastStatusCode ?? delivery.lastError ?? '—'}</td>
                <td>{when(delivery.createdAt)}</td>
                <td class="actions">
                  <RowAction
                    label="Redeliver"
                    subject={`delivery-${delivery.id}`}
                    busy={act.busy}
                    onClick={() =>
                      act.run(async () => {
                        await ok(
                          api.POST(
                            '/dashboard/api/{mode}/webhooks/deliveries/{deliveryId}/redeliver',
                            byDelivery(delivery.id),
                          ),
                        );
                        setDone(`Sending ${delivery.id} again now, with the same webhook-id.`);
                        list.reload();
                        setOpen(delivery.id);
                      })
                    }
                  />
                  {(delivery.status === 'PENDING' || delivery.status === 'SENDING') &&
                    !delivery.cancelledAt && (
                      <RowAction
                        label="Stop retrying"
                        subject={`delivery-${delivery.id}`}
                        busy={act.busy}
                        onClick={() =>
                          act.run(async () => {
                            await ok(
                              api.POST(
                                '/dashboard/api/{mode}/webhooks/deliveries/{deliveryId}/cancel',
                                byDelivery(delivery.id),
                              ),
                            );
                            setDone(`Stopped retrying ${delivery.id}.`);
                            list.reload();
                          })
                        }
                      />
                    )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        {open && <Attempts mode={mode} id={open} version={list.data} />}
      </Card>
      <Secret mode={mode} />
    </>
  );
}

function Attempts({ mode, id, version }: { mode: Mode; id: string; version: unknown }) {
  const delivery = useData(
    () =>
      ok(
        api.GET('/dashboard/api/{mode}/webhooks/deliveries/{deliveryId}', {
          params: { path: { mode, deliveryId: id } },
        }),
      ),
    [mode, id, version],
  );
  const data = delivery.data;
  return (
    <div class="detail">
      <ErrorNote error={delivery.error} />
      {data && (
        <>
          <h3>
            {data.id}: {data.status} → {data.url}
          </h3>
          <Table label="Attempts" columns={['Attempt', 'Time', 'Answer', num('Latency')]}>
            {(data.attempts ?? []).map((attempt) => (
              <tr key={attempt.attempt}>
                <td>{attempt.attempt}</td>
                <td>{when(attempt.at)}</td>
                <td>{attempt.statusCode ?? attempt.error}</td>
                <td class="num">{attempt.latencyMs} ms</td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </div>
  );
}

function Secret({ mode }: { mode: Mode }) {
  const [secret, setSecret] = useState<{ value: string; note?: string } | null>(null);
  const act = useAction();
  return (
    <Card title="Signing secret">
      <p class="muted">
        Receivers verify each callback with this secret (Standard Webhooks; docs/webhooks.md).
      </p>
      {secret && (
        <>
          <output class="secret mono" aria-label="Webhook signing secret">
            {secret.value}
          </output>
          {secret.note && <p class="note">{secret.note}</p>}
          <CopyButton text={secret.value} label="Copy secret" />{' '}
        </>
      )}
      <button
        type="button"
        class="secondary"
        disabled={act.busy}
        onClick={() =>
          act.run(async () => {
            const shown = await ok(
              api.POST('/dashboard/api/{mode}/account/webhook-secret', { params: { path: { mode } } }),
            );
            setSecret({ value: shown.webhookSecret });
          })
        }
      >
        Reveal secret
      </button>{' '}
      <button
        type="button"
        class="secondary"
        disabled={act.busy}
        onClick={() =>
          act.run(async () => {
            const rotated = await ok(
              api.POST('/dashboard/api/{mode}/account/webhook-secret/rotate', { params: { path: { mode } } }),
            );
            setSecret({
              value: rotated.webhookSecret,
              note: `The previous secret keeps signing until ${when(rotated.previousSecretValidUntil)}.`,
            });
          })
        }
      >
        Rotate secret
      </button>
      <ErrorNote error={act.error} />
    </Card>
  );
}
