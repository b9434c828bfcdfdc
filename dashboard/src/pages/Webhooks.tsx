import { useState } from 'preact/hooks';
import { type Answer, type Mode, modeApi } from '../api';
import { Card, CopyButton, ErrorNote, useAction } from '../components/ui';
import { useData } from '../data';
import { when } from '../format';

type Delivery = Answer<'dashboardGetWebhookDelivery'>;

/** Deliveries with their attempts, redelivery, a test event, and the signing secret. */
export function Webhooks({ mode }: { mode: Mode }) {
  const list = useData(
    () => modeApi<{ deliveries: Delivery[] }>(mode, 'GET', '/webhooks/deliveries?pageSize=50'),
    [mode],
  );
  const [open, setOpen] = useState<string | null>(null);
  const act = useAction();
  const [url, setUrl] = useState('');
  const [outcome, setOutcome] = useState<string | null>(null);
  return (
    <>
      <Card title="Send a test webhook">
        <form
          class="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            act.run(async () => {
              const result = await modeApi<{
                delivered: boolean;
                statusCode: number | null;
                latencyMs: number;
                error: string | null;
              }>(mode, 'POST', '/webhooks/test', { callbackUrl: url });
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
        {outcome && (
          <p class="note" role="status">
            {outcome}
          </p>
        )}
      </Card>
      <Card title="Deliveries">
        <ErrorNote error={list.error ?? act.error} />
        {list.data && list.data.deliveries.length === 0 && <p class="muted">None yet.</p>}
        {list.data && list.data.deliveries.length > 0 && (
          <table aria-label="Webhook deliveries">
            <thead>
              <tr>
                <th>Delivery</th>
                <th>Type</th>
                <th>Status</th>
                <th class="num">Attempts</th>
                <th>Last answer</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.deliveries.map((delivery) => (
                <tr key={delivery.id}>
                  <td>
                    <button
                      type="button"
                      class="link mono"
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
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      disabled={act.busy}
                      onClick={() =>
                        act.run(async () => {
                          await modeApi(mode, 'POST', `/webhooks/deliveries/${delivery.id}/redeliver`);
                          list.reload();
                          setOpen(delivery.id);
                        })
                      }
                    >
                      Redeliver {delivery.id}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {open && <Attempts mode={mode} id={open} version={list.data} />}
      </Card>
      <Secret mode={mode} />
    </>
  );
}

function Attempts({ mode, id, version }: { mode: Mode; id: string; version: unknown }) {
  const delivery = useData(
    () => modeApi<Delivery>(mode, 'GET', `/webhooks/deliveries/${id}`),
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
          <table aria-label="Attempts">
            <thead>
              <tr>
                <th>Attempt</th>
                <th>Time</th>
                <th>Answer</th>
                <th class="num">Latency</th>
              </tr>
            </thead>
            <tbody>
              {(data.attempts ?? []).map((attempt) => (
                <tr key={attempt.attempt}>
                  <td>{attempt.attempt}</td>
                  <td>{when(attempt.at)}</td>
                  <td>{attempt.statusCode ?? attempt.error}</td>
                  <td class="num">{attempt.latencyMs} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
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
            const shown = await modeApi<{ webhookSecret: string }>(mode, 'POST', '/webhooks/secret/reveal');
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
            const rotated = await modeApi<{ webhookSecret: string; previousSecretValidUntil: string }>(
              mode,
              'POST',
              '/webhooks/secret/rotate',
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
