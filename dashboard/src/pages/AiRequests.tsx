import { useState } from 'preact/hooks';
import { type Answer, api, type Mode, ok } from '../api';
import { Card, ErrorNote, num, Table } from '../components/ui';
import { useData } from '../data';
import { usd, when } from '../format';
import { AttestationKey } from './AttestationKey';
import { Scorecard } from './Scorecard';

type Summary = Answer<'dashboardListAiRequests'>['requests'][number];

type RecordView = Answer<'dashboardGetAiRequest'>;

/** AI resolutions: the list, and one request's votes with each model's reasoning. */
export function AiRequests({ mode }: { mode: Mode }) {
  const list = useData(
    () =>
      ok(
        api.GET('/dashboard/api/{mode}/ai/requests', { params: { path: { mode }, query: { pageSize: 50 } } }),
      ),
    [mode],
  );
  const [open, setOpen] = useState<Summary | null>(null);
  return (
    <>
      <Card title="AI requests">
        <ErrorNote error={list.error} />
        {list.data && list.data.requests.length === 0 && <p class="muted">None.</p>}
        {list.data && list.data.requests.length > 0 && (
          <Table label="AI requests" columns={['Question', 'Status', 'Outcome', num('Cost'), 'Created']}>
            {list.data.requests.map((request) => (
              <tr key={request.requestId}>
                <td>
                  <button
                    type="button"
                    class="link"
                    onClick={() => setOpen(open?.requestId === request.requestId ? null : request)}
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
          </Table>
        )}
        {open && <Votes mode={mode} request={open} />}
      </Card>
      <Scorecard mode={mode} />
      <AttestationKey mode={mode} />
    </>
  );
}

/** A model's answer in words: the outcome's label, "cannot determine", or why it failed. */
function answerOf(vote: RecordView['votes'][number], outcomes: string[]): string {
  if (vote.error) return `failed (${vote.error.kind})`;
  if (vote.outcomeIndex === null) return 'cannot determine';
  return outcomes[vote.outcomeIndex] ?? `outcome ${vote.outcomeIndex}`;
}

type Evidence = RecordView['votes'][number]['evidence'][number];

/**
 * Whether the model was offered web search (docs/ai.md#web-search), with the searches its provider
 * reports: "on (2)", "off", "none" when its provider has no search, "—" when not known.
 */
function searchOf(vote: RecordView['votes'][number]): string {
  if (vote.search === 'unavailable') return 'none';
  if (vote.search === 'off') return 'off';
  if (vote.search === 'on') return vote.searches === null ? 'on' : `on (${vote.searches})`;
  return '—';
}

/** Only http(s) links are made: evidence comes from the providers and is untrusted (docs/ai.md#evidence). */
const isWebUrl = (url: string) => /^https?:\/\//i.test(url);

/**
 * What a model looked at: a cited page as a link opening in a new tab without access to this page
 * (`noopener noreferrer`), or a call of Sibyl's own tools with its arguments and Sibyl's answer. All
 * of it is text, escaped by Preact; nothing is fetched.
 */
function EvidenceList({ items }: { items: Evidence[] }) {
  if (items.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="evidence">
      {items.map((item, i) =>
        item.kind === 'web' ? (
          <li key={i}>
            {isWebUrl(item.url) ? (
              <a href={item.url} target="_blank" rel="noopener noreferrer">
                {item.title || item.url}
              </a>
            ) : (
              <span>{item.title || item.url}</span>
            )}
            {item.quote ? <q>{item.quote}</q> : null}
          </li>
        ) : (
          <li key={i} class="mono">
            {item.tool}({JSON.stringify(item.input)}) → {JSON.stringify(item.output)}
          </li>
        ),
      )}
    </ul>
  );
}

function Votes({ mode, request }: { mode: Mode; request: Summary }) {
  const { requestId } = request;
  const record = useData(
    () =>
      ok(api.GET('/dashboard/api/{mode}/ai/request/{requestId}', { params: { path: { mode, requestId } } })),
    [mode, requestId],
  );
  const data = record.data;
  const result = data?.result;
  const models = result?.modelsUsed.length ?? data?.votes.length ?? 0;
  return (
    <div class="detail">
      <ErrorNote error={record.error} />
      {data && (
        <>
          <h3>Votes on “{request.question}”</h3>
          {result && (
            <p>
              Winner: <strong>{result.winningOutcomeLabel ?? 'none'}</strong>, agreement{' '}
              {Math.round(result.agreement * models)}/{models} models, confidence{' '}
              {result.confidence.toFixed(2)}, {result.canDetermine ? 'determined' : 'not determined'}.
            </p>
          )}
          <Table
            label="Votes"
            columns={[
              'Model',
              'Outcome',
              num('Confidence'),
              'Reasoning',
              num('Latency'),
              'Web search',
              'Evidence',
            ]}
          >
            {data.votes.map((vote) => (
              <tr key={vote.model}>
                <td class="mono">{vote.model}</td>
                <td>{answerOf(vote, request.outcomes)}</td>
                <td class="num">{vote.confidence?.toFixed(2) ?? '—'}</td>
                <td>{vote.reasoning ?? vote.error?.message ?? '—'}</td>
                <td class="num">{vote.latencyMs} ms</td>
                <td>{searchOf(vote)}</td>
                <td>
                  <EvidenceList items={vote.evidence} />
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </div>
  );
}
