import { useState } from 'preact/hooks';
import { type ApiKey, api, inMode, type Mode, ok } from '../api';
import { Card, CopyButton, Done, ErrorNote, RowAction, Table, useAction } from '../components/ui';
import { useData } from '../data';
import { ago, when } from '../format';
import { KeyForm } from './KeyForm';

function status(key: ApiKey): string {
  if (key.revokedAt) return 'revoked';
  if (!key.isActive) return 'expired';
  return key.rotatedTo ? 'rotated (grace period)' : 'active';
}

/** A revoked key never expires: it is revoked. */
function expiry(key: ApiKey): string {
  if (key.revokedAt) return 'revoked';
  return key.expiresAt ? when(key.expiresAt) : 'never';
}

/** The account's API keys: list, create (the secret shown once), edit, rotate, revoke. */
export function Keys({ mode }: { mode: Mode }) {
  const keys = useData(() => ok(api.GET('/dashboard/api/{mode}/keys', inMode(mode))), [mode]);
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const edited = keys.data?.keys.find((key) => key.id === editing);
  const action = useAction();
  const shown = (issued: { name: string; key: string }) => {
    setDone(null);
    setSecret(issued);
    keys.reload();
  };
  const byKey = (key: ApiKey) => ({ params: { path: { mode, keyId: key.id } } });
  const subject = (key: ApiKey) => `key-name-${key.id}`;
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
        <Done text={done} />
        {keys.data && keys.data.keys.length === 0 && <p class="muted">No keys yet: create one below.</p>}
        {keys.data && keys.data.keys.length > 0 && (
          <Table
            label="API keys"
            columns={['Name', 'Key', 'Permissions', 'Status', 'Last used', 'Expires', 'Created', '']}
          >
            {keys.data.keys.map((key) => (
              <tr key={key.id} data-key-id={key.id}>
                <td id={subject(key)}>{key.name}</td>
                <td class="mono">{key.keyPrefix}…</td>
                <td>{key.permissions.join(', ')}</td>
                <td>{status(key)}</td>
                <td title={key.lastUsedAt ? when(key.lastUsedAt) : undefined}>{ago(key.lastUsedAt)}</td>
                <td>{expiry(key)}</td>
                <td>{when(key.createdAt)}</td>
                <td class="actions">
                  {!key.revokedAt && (
                    <RowAction
                      label="Edit"
                      subject={subject(key)}
                      onClick={() => {
                        setDone(null);
                        setEditing(key.id);
                      }}
                    />
                  )}
                  {key.isActive && !key.rotatedTo && (
                    <RowAction
                      label="Rotate"
                      subject={subject(key)}
                      busy={action.busy}
                      onClick={() =>
                        action.run(async () => {
                          const rotated = await ok(
                            api.POST('/dashboard/api/{mode}/keys/{keyId}/rotate', byKey(key)),
                          );
                          shown({ name: rotated.newKey.name, key: rotated.newKey.key });
                        })
                      }
                    />
                  )}
                  {!key.revokedAt && confirming === key.id && (
                    <>
                      <RowAction
                        label="Yes, revoke"
                        subject={subject(key)}
                        busy={action.busy}
                        danger
                        onClick={() =>
                          action.run(async () => {
                            await ok(api.DELETE('/dashboard/api/{mode}/keys/{keyId}', byKey(key)));
                            setConfirming(null);
                            setDone(`Revoked “${key.name}”: it is refused from now on.`);
                            keys.reload();
                          })
                        }
                      />
                      <RowAction label="Keep it" subject={subject(key)} onClick={() => setConfirming(null)} />
                    </>
                  )}
                  {!key.revokedAt && confirming !== key.id && (
                    <RowAction label="Revoke" subject={subject(key)} onClick={() => setConfirming(key.id)} />
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      {edited && (
        <>
          <KeyForm
            key={edited.id}
            mode={mode}
            existing={edited}
            onSaved={(saved) => {
              setEditing(null);
              setDone(`Saved “${saved.name}”: the change applies at once.`);
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
