import { useState } from 'preact/hooks';
import { type Answer, api, type Mode, ok } from '../api';
import { Card, Done, ErrorNote, RowAction, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { usd, when } from '../format';
import { AiRequests } from './AiRequests';
import { Webhooks } from './Webhooks';

const TABS = [
  { id: 'jobs', label: 'Scheduled jobs' },
  { id: 'ai', label: 'AI requests' },
  { id: 'webhooks', label: 'Webhooks' },
] as const;

/** What the account's keys set in motion: scheduled jobs, AI resolutions, webhook deliveries. */
export function Activity({ mode, onBalanceChange }: { mode: Mode; onBalanceChange: () => void }) {
  const [tab, setTab] = useState<(typeof TABS)[number]['id']>('jobs');
  return (
    <>
      <div class="tabs" role="tablist">
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            aria-selected={t.id === tab}
            class={t.id === tab ? 'tab active' : 'tab'}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      {tab === 'jobs' && (
        <>
          <Jobs mode={mode} type="price" onBalanceChange={onBalanceChange} />
          <Jobs mode={mode} type="ai" onBalanceChange={onBalanceChange} />
        </>
      )}
      {tab === 'ai' && <AiRequests mode={mode} />}
      {tab === 'webhooks' && <Webhooks mode={mode} />}
    </>
  );
}

type Job = Answer<'dashboardListPriceJobs'>['jobs'][number];

/** A job's list, by its type: the API's paths, under the dashboard's door. */
const listOf = (mode: Mode, type: 'price' | 'ai') => {
  const options = { params: { path: { mode }, query: { pageSize: 50 } } };
  return type === 'price'
    ? ok(api.GET('/dashboard/api/{mode}/price/scheduled', options))
    : ok(api.GET('/dashboard/api/{mode}/ai/scheduled', options));
};

const cancelOf = (mode: Mode, type: 'price' | 'ai', jobId: string) => {
  const options = { params: { path: { mode, jobId } } };
  return type === 'price'
    ? ok(api.POST('/dashboard/api/{mode}/price/scheduled/{jobId}/cancel', options))
    : ok(api.POST('/dashboard/api/{mode}/ai/scheduled/{jobId}/cancel', options));
};

function Jobs({
  mode,
  type,
  onBalanceChange,
}: {
  mode: Mode;
  type: 'price' | 'ai';
  onBalanceChange: () => void;
}) {
  const jobs = useData<{ jobs: Job[] }>(() => listOf(mode, type), [mode, type]);
  const cancel = useAction();
  const [refund, setRefund] = useState<string | null>(null);
  return (
    <Card title={type === 'price' ? 'Scheduled price checks' : 'Scheduled AI resolutions'}>
      <ErrorNote error={jobs.error ?? cancel.error} />
      <Done text={refund} />
      {jobs.data && jobs.data.jobs.length === 0 && <p class="muted">None.</p>}
      {jobs.data && jobs.data.jobs.length > 0 && (
        <Table
          label={type === 'price' ? 'Scheduled price checks' : 'Scheduled AI resolutions'}
          columns={['Job', 'Scheduled for', 'Status', 'Created', '']}
        >
          {jobs.data.jobs.map((job) => (
            <tr key={job.jobId}>
              <td class="mono" id={`job-${job.jobId}`}>
                {job.jobId}
              </td>
              <td>{when(job.scheduledFor)}</td>
              <td>{job.status}</td>
              <td>{when(job.createdAt)}</td>
              <td>
                {job.canCancel && (
                  <RowAction
                    label="Cancel"
                    subject={`job-${job.jobId}`}
                    busy={cancel.busy}
                    onClick={() =>
                      cancel.run(async () => {
                        const done = await cancelOf(mode, type, job.jobId);
                        setRefund(
                          `Cancelled ${job.jobId}: ${usd(done.refundUsd)} refunded; balance ${usd(done.remainingBalanceUsd)}.`,
                        );
                        jobs.reload();
                        onBalanceChange();
                      })
                    }
                  />
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Card>
  );
}
