import { useState } from 'preact/hooks';
import { type Answer, type Mode, modeApi } from '../api';
import { Card, ErrorNote, useAction } from '../components/ui';
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

type Job = Answer<'dashboardListJobs'>['jobs'][number];

function Jobs({
  mode,
  type,
  onBalanceChange,
}: {
  mode: Mode;
  type: 'price' | 'ai';
  onBalanceChange: () => void;
}) {
  const jobs = useData(
    () => modeApi<{ jobs: Job[]; total: number }>(mode, 'GET', `/jobs/${type}?pageSize=50`),
    [mode, type],
  );
  const cancel = useAction();
  const [refund, setRefund] = useState<string | null>(null);
  return (
    <Card title={type === 'price' ? 'Scheduled price checks' : 'Scheduled AI resolutions'}>
      <ErrorNote error={jobs.error ?? cancel.error} />
      {refund && (
        <p class="note" role="status">
          {refund}
        </p>
      )}
      {jobs.data && jobs.data.jobs.length === 0 && <p class="muted">None.</p>}
      {jobs.data && jobs.data.jobs.length > 0 && (
        <table aria-label={type === 'price' ? 'Scheduled price checks' : 'Scheduled AI resolutions'}>
          <thead>
            <tr>
              <th>Job</th>
              <th>Scheduled for</th>
              <th>Status</th>
              <th>Created</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {jobs.data.jobs.map((job) => (
              <tr key={job.jobId}>
                <td class="mono">{job.jobId}</td>
                <td>{when(job.scheduledFor)}</td>
                <td>{job.status}</td>
                <td>{when(job.createdAt)}</td>
                <td>
                  {job.canCancel && (
                    <button
                      type="button"
                      class="secondary"
                      disabled={cancel.busy}
                      onClick={() =>
                        cancel.run(async () => {
                          const done = await modeApi<{ refundUsd: string; remainingBalanceUsd: string }>(
                            mode,
                            'POST',
                            `/jobs/${type}/${job.jobId}/cancel`,
                          );
                          setRefund(
                            `Cancelled ${job.jobId}: ${usd(done.refundUsd)} refunded; balance ${usd(done.remainingBalanceUsd)}.`,
                          );
                          jobs.reload();
                          onBalanceChange();
                        })
                      }
                    >
                      Cancel {job.jobId}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
