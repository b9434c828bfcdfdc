import { type Answer, type Mode, modeApi, query, type UsageReport } from '../api';
import { UsageChart } from '../components/Chart';
import { Card, ErrorNote, Stat } from '../components/ui';
import { useData } from '../data';
import { daysAgo, usd } from '../format';
import type { Location } from '../router';

type Overview = Answer<'dashboardOverview'>;

/** Balance, spend today and this month, the last 30 days drawn, and a warning when funds run low. */
export function Home({ mode, navigate }: { mode: Mode; navigate: (to: Location) => void }) {
  const overview = useData(() => modeApi<Overview>(mode, 'GET', '/overview'), [mode]);
  const usage = useData(
    () => modeApi<UsageReport>(mode, 'GET', `/usage${query({ from: daysAgo(29), groupBy: 'day' })}`),
    [mode],
  );
  const data = overview.data;
  return (
    <>
      <ErrorNote error={overview.error ?? usage.error} />
      {data && (
        <>
          {data.lowBalance && (
            <p class="warning" role="alert">
              Your balance is below {usd(data.lowBalanceThresholdUsd)}: paid requests will soon be refused.{' '}
              <a
                href={`/dashboard/${mode}/funds`}
                onClick={(event) => {
                  event.preventDefault();
                  navigate({ mode, page: 'funds' });
                }}
              >
                Add funds
              </a>
            </p>
          )}
          <div class="stats">
            <Stat label="Balance" value={usd(data.account.balanceUsd)} note={data.account.id} />
            <Stat
              label="Spend today"
              value={usd(data.today.spendUsd)}
              note={`${data.today.requests} paid requests`}
            />
            <Stat
              label="Spend this month"
              value={usd(data.month.spendUsd)}
              note={`${data.month.requests} paid requests`}
            />
          </div>
        </>
      )}
      <Card title="Last 30 days">{usage.data && <UsageChart rows={usage.data.rows} />}</Card>
    </>
  );
}
