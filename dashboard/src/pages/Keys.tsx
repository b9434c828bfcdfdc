import { useState } from 'preact/hooks';
import { type ApiKey, type Mode, modeApi } from '../api';
import { Card, CopyButton, ErrorNote, useAction } from '../components/ui';
import { useData } from '../data';
import { when } from '../format';
import { KeyForm } from './KeyForm';

/** The account's API keys: list, create (the secret shown once), edit, rotate, revoke. */
export function Keys({ mode }: { mode: Mode }) {
  const keys = useData(() => modeApi<{ keys: ApiKey[] }>(mode, 'GET', '/keys'), [mode]);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const edited = keys.data?.keys.find((key) => key.id === editing);
  const action = useAction();
  const shown = (issued: { name: string; key: string }) => {
    setSecret(issued);
    keys.reload();
  };
  return (
    <>
      {secret && (
        <Card title="Your new key">
          <p class="warning" role="status">
            Copy “{secret.name}” now: this is the only time its secret is shown.
          </p>
          <output class="secret mono" aria-label="New API key">
            {secret.key}
          </output>
          <CopyButton text={secret.key} label="Copy key" />{' '}
          <button type="button" class="secondary" onClick={() => setSecret(null)}>
            Done
          </button>
        </Card>
      )}
      <Card title="Keys">
        <ErrorNote error={keys.error ?? action.error} />
        {keys.data && keys.data.keys.length === 0 && <p class="muted">No keys yet: create one below.</p>}
        {keys.data && keys.data.keys.length > 0 && (
          <table aria-label="API keys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Permissions</th>
                <th>Status</th>
                <th>Expires</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td>{key.name}</td>
                  <td class="mono">{key.keyPrefix}…</td>
                  <td>{key.permissions.join(', ')}</td>
                  <td>
                    {key.revokedAt
                      ? 'revoked'
                      : key.isActive
                        ? key.rotatedTo
                          ? 'rotated (grace period)'
                          : 'active'
                        : 'expired'}
                  </td>
                  <td>{when(key.expiresAt)}</td>
                  <td>{when(key.createdAt)}</td>
                  <td class="actions">
                    {!key.revokedAt && (
                      <button type="button" class="secondary" onClick={() => setEditing(key.id)}>
                        Edit {key.name}
                      </button>
                    )}
                    {key.isActive && !key.rotatedTo && (
                      <button
                        type="button"
                        class="secondary"
                        disabled={action.busy}
                        onClick={() =>
                          action.run(async () => {
                            const rotated = await modeApi<{ newKey: ApiKey & { key: string } }>(
                              mode,
                              'POST',
                              `/keys/${key.id}/rotate`,
                            );
                            shown({ name: rotated.newKey.name, key: rotated.newKey.key });
                          })
                        }
                      >
                        Rotate {key.name}
                      </button>
                    )}
                    {!key.revokedAt &&
                      (confirming === key.id ? (
                        <>
                          <button
                            type="button"
                            class="danger"
                            disabled={action.busy}
                            onClick={() =>
                              action.run(async () => {
                                await modeApi(mode, 'DELETE', `/keys/${key.id}`);
                                setConfirming(null);
                                keys.reload();
                              })
                            }
                          >
                            Yes, revoke {key.name}
                          </button>
                          <button type="button" class="secondary" onClick={() => setConfirming(null)}>
                            Keep it
                          </button>
                        </>
                      ) : (
                        <button type="button" class="secondary" onClick={() => setConfirming(key.id)}>
                          Revoke {key.name}
                        </button>
                      ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      {edited && (
        <>
          <KeyForm
            key={edited.id}
            mode={mode}
            existing={edited}
            onSaved={() => {
              setEditing(null);
              keys.reload();
            }}
          />
          <button type="button" class="secondary" onClick={() => setEditing(null)}>
            Close the editor
          </button>
        </>
      )}
      <KeyForm mode={mode} onCreated={shown} />
    </>
  );
}
