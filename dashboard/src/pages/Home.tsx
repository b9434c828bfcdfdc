import { type Answer, api, inMode, type Mode, ok } from '../api';
import { UsageChart } from '../components/Chart';
import { Card, ErrorNote, Stat } from '../components/ui';
import { useData } from '../data';
import { daysAgo, usd } from '../format';
import type { Location } from '../router';

type Overview = Answer<'dashboardOverview'>;

/**
 * Balance, spend today and this month, the last 30 days drawn; a warning when a funded account runs
 * low, and a call to fund a live account that never was. A wallet's first sign-in lands here in the
 * sandbox (`welcome`), with its play money and a line on going live.
 */
export function Home({
  mode,
  navigate,
  welcome = false,
}: {
  mode: Mode;
  navigate: (to: Location) => void;
  welcome?: boolean;
}) {
  const overview = useData(() => ok(api.GET('/dashboard/api/{mode}/overview', inMode(mode))), [mode]);
  const usage = useData(
    () =>
      ok(
        api.GET('/dashboard/api/{mode}/account/usage', {
          params: { path: { mode }, query: { from: daysAgo(29), groupBy: 'day' } },
        }),
      ),
    [mode],
  );
  const link = (to: Location, text: string) => (
    <a
      href={`/dashboard/${to.mode}/${to.page}`}
      onClick={(event) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {text}
    </a>
  );
  const data: Overview | null = overview.data;
  return (
    <>
      {welcome && (
        <p class="note welcome" role="status">
          Welcome: this is your sandbox, with {usd(data?.account.balanceUsd ?? '100.00')} of play money to try
          every call with a pk_test_ key. To go live, {link({ mode: 'live', page: 'funds' }, 'add funds')} to
          your live account and make a pk_live_ key there.
        </p>
      )}
      <ErrorNote error={overview.error ?? usage.error} />
      {data && !data.funded && mode === 'live' && (
        <Card title="Fund your account">
          <div class="cta">
            <p>
              Your live account has no funds yet: paid requests with its pk_live_ keys need a balance. Send
              SOL or USDC from your wallet, and it is credited here.
            </p>
            <p>
              {link({ mode: 'live', page: 'funds' }, 'Add funds')} · or keep trying everything in the{' '}
              {link({ mode: 'sandbox', page: '' }, 'sandbox')}, with play money.
            </p>
          </div>
        </Card>
      )}
      {data?.lowBalance && (
        <p class="warning" role="alert">
          Your balance is below {usd(data.lowBalanceThresholdUsd)}: paid requests will soon be refused.{' '}
          {link({ mode, page: 'funds' }, 'Add funds')}
        </p>
      )}
      {data && (
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
      )}
      <Card title="Last 30 days">{usage.data && <UsageChart rows={usage.data.rows} />}</Card>
    </>
  );
}
