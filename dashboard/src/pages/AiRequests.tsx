import { useState } from 'preact/hooks';
import { type Answer, type Mode, modeApi } from '../api';
import { Card, ErrorNote } from '../components/ui';
import { useData } from '../data';
import { usd, when } from '../format';

type Summary = Answer<'dashboardListAiRequests'>['requests'][number];

type RecordView = Answer<'dashboardGetAiRequest'>;

/** AI resolutions: the list, and one request's votes with each model's reasoning. */
export function AiRequests({ mode }: { mode: Mode }) {
  const list = useData(
    () => modeApi<{ requests: Summary[] }>(mode, 'GET', '/ai-requests?pageSize=50'),
    [mode],
  );
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Card title="AI requests">
      <ErrorNote error={list.error} />
      {list.data && list.data.requests.length === 0 && <p class="muted">None.</p>}
      {list.data && list.data.requests.length > 0 && (
        <table aria-label="AI requests">
          <thead>
            <tr>
              <th>Question</th>
              <th>Status</th>
              <th>Outcome</th>
              <th class="num">Cost</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.requests.map((request) => (
              <tr key={request.requestId}>
                <td>
                  <button
                    type="button"
                    class="link"
                    onClick={() => setOpen(open === request.requestId ? null : request.requestId)}
                  >
                    {request.question}
                  </button>
                </td>
                <td>{request.status}</td>
                <td>
                  {request.winningOutcomeLabel ?? '—'}
                  {request.canDetermine === false ? ' (undetermined)' : ''}
                </td>
                <td class="num">
                  {usd(request.costUsd)}
                  {request.refundUsd ? ` (refunded)` : ''}
                </td>
                <td>{when(request.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && <Votes mode={mode} requestId={open} />}
    </Card>
  );
}

function Votes({ mode, requestId }: { mode: Mode; requestId: string }) {
  const record = useData(
    () => modeApi<RecordView>(mode, 'GET', `/ai-requests/${encodeURIComponent(requestId)}`),
    [mode, requestId],
  );
  const data = record.data;
  return (
    <div class="detail">
      <ErrorNote error={record.error} />
      {data && (
        <>
          <h3>Votes of {data.requestId}</h3>
          {data.result && (
            <p>
              Winner: <strong>{data.result.winningOutcomeLabel ?? 'none'}</strong>, agreement{' '}
              {data.result.agreement}, confidence {data.result.confidence.toFixed(2)},{' '}
              {data.result.canDetermine ? 'determined' : 'not determined'}.
            </p>
          )}
          <table aria-label="Votes">
            <thead>
              <tr>
                <th>Model</th>
                <th>Outcome</th>
                <th class="num">Confidence</th>
                <th>Reasoning</th>
                <th class="num">Latency</th>
              </tr>
            </thead>
            <tbody>
              {data.votes.map((vote) => (
                <tr key={vote.model}>
                  <td class="mono">{vote.model}</td>
                  <td>
                    {vote.error ? `failed (${vote.error.kind})` : (vote.outcomeIndex ?? 'cannot determine')}
                  </td>
                  <td class="num">{vote.confidence?.toFixed(2) ?? '—'}</td>
                  <td>{vote.reasoning ?? vote.error?.message ?? '—'}</td>
                  <td class="num">{vote.latencyMs} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
