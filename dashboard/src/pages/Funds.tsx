import { useEffect, useState } from 'preact/hooks';
import { type Answer, api, inMode, type Mode, ok } from '../api';
import { Qr } from '../components/Qr';
import { Card, CopyButton, Done, ErrorNote, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { usd, when } from '../format';
import { Wallets } from './Wallets';

type FundsView = Answer<'dashboardFunds'>;

/** Finalization follows confirmation by some 13 seconds: a look every 5 s shows it soon after. */
const PENDING_REFRESH_MS = 5000;

/** How to add funds: the treasury address, its QR code and Solana Pay links; sandbox: play money. */
export function Funds({ mode, onBalanceChange }: { mode: Mode; onBalanceChange: () => void }) {
  const funds = useData(() => ok(api.GET('/dashboard/api/{mode}/funds', inMode(mode))), [mode]);
  const play = useAction();
  const [added, setAdded] = useState<string | null>(null);
  const data = funds.data;
  // A pending deposit becomes credited (or disappears) once the chain finalizes it: look again
  // until none is pending, and let the header's balance follow.
  const pending = data?.deposits.some((deposit) => deposit.status === 'pending') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => {
      funds.reload();
      onBalanceChange();
    }, PENDING_REFRESH_MS);
    return () => clearInterval(timer);
  }, [pending]);
  return (
    <>
      <ErrorNote error={funds.error} />
      {data && mode === 'sandbox' && (
        <Card title="Play money">
          <p>Sandbox accounts run on play money: add 100.00 at a time, up to a balance of 1,000.00.</p>
          <button
            type="button"
            disabled={play.busy}
            onClick={() =>
              play.run(async () => {
                const credit = await ok(
                  api.POST('/dashboard/api/{mode}/play-money', { params: { path: { mode: 'sandbox' } } }),
                );
                setAdded(
                  credit.creditedUsd === '0.00'
                    ? `Nothing added: the balance is at the cap of ${usd(credit.capUsd)}.`
                    : `Added ${usd(credit.creditedUsd)} of play money: the balance is ${usd(credit.balanceUsd)}.`,
                );
                funds.reload();
                onBalanceChange();
              })
            }
          >
            Add play money
          </button>
          <Done text={added} />
          <ErrorNote error={play.error} />
        </Card>
      )}
      {data && mode === 'live' && <Deposit funds={data} />}
      {data && mode === 'live' && <Wallets />}
      {data && (
        <Card title="Deposits">
          {data.deposits.length === 0 ? (
            <p class="muted">No deposits yet.</p>
          ) : (
            <Table label="Deposits" columns={['Time', 'Status', 'Token', 'USD', 'Reference']}>
              {data.deposits.map((deposit) => (
                <tr key={deposit.id}>
                  <td>{when(deposit.createdAt)}</td>
                  <td>{deposit.status}</td>
                  <td>{deposit.token ? `${deposit.amount} ${deposit.token}` : '—'}</td>
                  <td class="num">{deposit.usdValue === null ? '—' : usd(deposit.usdValue)}</td>
                  <td class="mono">{deposit.signature ?? deposit.reference ?? '—'}</td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
      )}
    </>
  );
}

function Deposit({ funds }: { funds: FundsView }) {
  return (
    <Card title="Deposit SOL or USDC">
      {!funds.watcher.enabled && (
        <p class="note">
          Deposits are credited by the operator: send funds as below, then tell the operator the transaction
          signature (they credit it with <code>sibyl accounts credit</code>).
        </p>
      )}
      {funds.depositAddress ? (
        <div class="deposit">
          {funds.solanaPayUrl && (
            <Qr text={funds.solanaPayUrl} label="QR code: Solana Pay link for a SOL deposit" />
          )}
          <div>
            <p>
              Send SOL or USDC (mint <span class="mono">{funds.usdcMint}</span>) to:
            </p>
            <p class="address mono">{funds.depositAddress}</p>
            <CopyButton text={funds.depositAddress} label="Copy address" />
            <p>
              Or pay with a Solana Pay wallet: <a href={funds.solanaPayUrl ?? '#'}>SOL</a> ·{' '}
              <a href={funds.solanaPayUsdcUrl ?? '#'}>USDC</a>. The link carries your account's reference key
              (<span class="mono">{funds.referenceKey}</span>), which credits the deposit to this account
              whichever wallet pays.
            </p>
            <p class="muted">Deposits below {usd(funds.minimumUsd)} are not credited.</p>
          </div>
        </div>
      ) : (
        <p>
          This deployment has no deposit address configured (<code>DEPOSIT_ADDRESS</code>): ask the operator
          how to fund your account. Your account's Solana Pay reference key is{' '}
          <span class="mono">{funds.referenceKey}</span>.
        </p>
      )}
    </Card>
  );
}
