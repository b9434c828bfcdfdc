import { useState } from 'preact/hooks';
import { type ApiKey, type Mode, modeApi } from '../api';
import { Card, ErrorNote, useAction } from '../components/ui';

const PERMISSIONS = ['price', 'batch', 'historical', 'ai', 'schedule', 'markets', 'account', 'keys'] as const;

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter(Boolean);

/** Every setting of a new key: the body of POST /keys, as the API takes it. */
export function CreateKeyForm({
  mode,
  onCreated,
}: {
  mode: Mode;
  onCreated: (key: { name: string; key: string }) => void;
}) {
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<string[]>([...PERMISSIONS]);
  const [expiresAt, setExpiresAt] = useState('');
  const [ips, setIps] = useState('');
  const [origins, setOrigins] = useState('');
  const [rate, setRate] = useState({ perSecond: '', burst: '' });
  const [quotas, setQuotas] = useState({
    dailyRequests: '',
    monthlyRequests: '',
    dailySpendUsd: '',
    monthlySpendUsd: '',
  });
  const create = useAction();

  const submit = (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { name, permissions };
    if (expiresAt) body.expiresAt = new Date(expiresAt).toISOString();
    if (ips.trim()) body.allowedIps = lines(ips);
    if (origins.trim()) body.allowedOrigins = lines(origins);
    if (rate.perSecond || rate.burst) {
      body.rateLimit = { requestsPerSecond: Number(rate.perSecond), burst: Number(rate.burst) };
    }
    const quota: Record<string, number | string> = {};
    if (quotas.dailyRequests) quota.dailyRequests = Number(quotas.dailyRequests);
    if (quotas.monthlyRequests) quota.monthlyRequests = Number(quotas.monthlyRequests);
    if (quotas.dailySpendUsd) quota.dailySpendUsd = quotas.dailySpendUsd;
    if (quotas.monthlySpendUsd) quota.monthlySpendUsd = quotas.monthlySpendUsd;
    if (Object.keys(quota).length > 0) body.quotas = quota;
    create.run(async () => {
      const created = await modeApi<ApiKey & { key: string }>(mode, 'POST', '/keys', body);
      setName('');
      onCreated({ name: created.name, key: created.key });
    });
  };

  const toggle = (permission: string) =>
    setPermissions((current) =>
      current.includes(permission) ? current.filter((p) => p !== permission) : [...current, permission],
    );

  return (
    <Card title="Create a key">
      <form class="key-form" onSubmit={submit}>
        <label>
          Name <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Permissions</legend>
          {PERMISSIONS.map((permission) => (
            <label key={permission} class="inline">
              <input
                type="checkbox"
                checked={permissions.includes(permission)}
                onChange={() => toggle(permission)}
              />{' '}
              {permission}
            </label>
          ))}
        </fieldset>
        <label>
          Expires (optional){' '}
          <input
            type="datetime-local"
            value={expiresAt}
            onInput={(e) => setExpiresAt(e.currentTarget.value)}
          />
        </label>
        <label>
          Allowed IPs or CIDR ranges (one per line; empty: any)
          <textarea rows={2} value={ips} onInput={(e) => setIps(e.currentTarget.value)} />
        </label>
        <label>
          Allowed browser origins (one per line; empty: any)
          <textarea rows={2} value={origins} onInput={(e) => setOrigins(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Rate limit (empty: the service default)</legend>
          <label class="inline">
            Requests per second{' '}
            <input
              inputMode="decimal"
              size={6}
              value={rate.perSecond}
              onInput={(e) => setRate({ ...rate, perSecond: e.currentTarget.value })}
            />
          </label>
          <label class="inline">
            Burst{' '}
            <input
              inputMode="numeric"
              size={6}
              value={rate.burst}
              onInput={(e) => setRate({ ...rate, burst: e.currentTarget.value })}
            />
          </label>
        </fieldset>
        <fieldset>
          <legend>Quotas (empty: unlimited)</legend>
          {(
            [
              ['dailyRequests', 'Requests per day'],
              ['monthlyRequests', 'Requests per month'],
              ['dailySpendUsd', 'Spend per day (USD)'],
              ['monthlySpendUsd', 'Spend per month (USD)'],
            ] as const
          ).map(([field, label]) => (
            <label key={field} class="inline">
              {label}{' '}
              <input
                size={8}
                value={quotas[field]}
                onInput={(e) => setQuotas({ ...quotas, [field]: e.currentTarget.value })}
              />
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={create.busy}>
          Create key
        </button>
        <ErrorNote error={create.error} />
      </form>
    </Card>
  );
}
