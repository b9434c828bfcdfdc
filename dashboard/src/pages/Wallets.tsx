import type { Wallet } from '@wallet-standard/base';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api';
import { Card, ErrorNote, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { when } from '../format';
import { linkWith, watchWallets } from '../wallet';

/**
 * "Your wallets" on Add funds (live): deposits are recognised by the wallet that sends them, so the
 * sign-in wallet counts, and any other wallet linked here by signing with it.
 */
export function Wallets() {
  const list = useData(
    () => ok(api.GET('/dashboard/api/{mode}/wallets', { params: { path: { mode: 'live' } } })),
    [],
  );
  const [installed, setInstalled] = useState<readonly Wallet[]>([]);
  const [choosing, setChoosing] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const link = useAction();
  const unlink = useAction();
  useEffect(() => watchWallets(setInstalled), []);
  const wallets = list.data?.wallets ?? [];
  const linkedCount = wallets.filter((w) => w.kind === 'linked').length;
  return (
    <Card title="Your wallets">
      <p>
        Deposits are recognised by the wallet that <strong>sends</strong> them: a transfer from one of these
        wallets is credited to this account. A withdrawal from an exchange comes from the exchange's wallet,
        not yours: pay with the Solana Pay link above instead (it carries your reference key), or the deposit
        waits for the operator.
      </p>
      <ErrorNote error={list.error} />
      {list.data && (
        <Table label="Your wallets" columns={['Wallet', 'How', 'Linked', '']}>
          {wallets.map((wallet) => (
            <tr key={wallet.address}>
              <td class="mono">{wallet.address}</td>
              <td>{wallet.kind === 'sign-in' ? 'sign-in wallet' : 'linked'}</td>
              <td>{wallet.linkedAt ? when(wallet.linkedAt) : '—'}</td>
              <td>
                {wallet.kind === 'linked' && (
                  <button
                    type="button"
                    class="secondary"
                    disabled={unlink.busy}
                    aria-label={`Unlink ${wallet.address}`}
                    onClick={() =>
                      unlink.run(async () => {
                        await ok(
                          api.DELETE('/dashboard/api/{mode}/wallets/{address}', {
                            params: { path: { mode: 'live', address: wallet.address } },
                          }),
                        );
                        setNote(`Unlinked ${wallet.address}: its deposits no longer count for this account.`);
                        list.reload();
                      })
                    }
                  >
                    Unlink
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ErrorNote error={unlink.error} />
      {list.data && linkedCount < list.data.maxLinked && (
        <>
          <p>
            <button type="button" disabled={link.busy} onClick={() => setChoosing(!choosing)}>
              Link another wallet
            </button>
          </p>
          {choosing && (
            <div>
              <p class="muted">
                Switch your wallet to the account to link (or pick another wallet), then sign the message: it
                names this Sibyl account, costs nothing and sends no transaction.
              </p>
              {installed.length === 0 ? (
                <p class="note">No Solana wallet found in this browser.</p>
              ) : (
                <ul class="wallets">
                  {installed.map((wallet) => (
                    <li key={wallet.name}>
                      <button
                        type="button"
                        disabled={link.busy}
                        onClick={() =>
                          link.run(async () => {
                            const answer = await linkWith(wallet);
                            setNote(
                              answer.linked
                                ? `Linked ${answer.wallet.address}.`
                                : answer.wallet.kind === 'sign-in'
                                  ? `${answer.wallet.address} is the wallet you sign in with: it counts already.`
                                  : `${answer.wallet.address} was linked already.`,
                            );
                            setChoosing(false);
                            list.reload();
                          })
                        }
                      >
                        <img src={wallet.icon} alt="" width={24} height={24} /> Link with {wallet.name}
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
        </>
      )}
      {note && <p role="status">{note}</p>}
      <ErrorNote error={link.error} />
    </Card>
  );
}
