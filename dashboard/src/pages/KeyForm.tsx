import { useState } from 'preact/hooks';
import { type ApiKey, type Mode, modeApi } from '../api';
import { Card, ErrorNote, useAction } from '../components/ui';

const PERMISSIONS = ['price', 'batch', 'historical', 'ai', 'schedule', 'markets', 'account', 'keys'] as const;
const QUOTAS = [
  ['dailyRequests', 'Requests per day'],
  ['monthlyRequests', 'Requests per month'],
  ['dailySpendUsd', 'Spend per day (USD)'],
  ['monthlySpendUsd', 'Spend per month (USD)'],
] as const;
type QuotaField = (typeof QUOTAS)[number][0];

/** What the form holds: the inputs' text, as typed. */
interface Fields {
  name: string;
  permissions: string[];
  expiresAt: string;
  ips: string;
  origins: string;
  rate: { perSecond: string; burst: string };
  quotas: Record<QuotaField, string>;
}

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .filter(Boolean);

/** An ISO time as a `datetime-local` input shows it (the browser's time zone). */
function localInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

function fieldsOf(key: ApiKey | undefined): Fields {
  const quota = (value: number | string | null | undefined) => (value == null ? '' : String(value));
  return {
    name: key?.name ?? '',
    permissions: key ? [...key.permissions] : [...PERMISSIONS],
    expiresAt: localInput(key?.expiresAt),
    ips: key?.allowedIps.join('\n') ?? '',
    origins: key?.allowedOrigins.join('\n') ?? '',
    rate:
      key && !key.rateLimit.isDefault
        ? { perSecond: String(key.rateLimit.requestsPerSecond), burst: String(key.rateLimit.burst) }
        : { perSecond: '', burst: '' },
    quotas: {
      dailyRequests: quota(key?.quotas.dailyRequests),
      monthlyRequests: quota(key?.quotas.monthlyRequests),
      dailySpendUsd: quota(key?.quotas.dailySpendUsd),
      monthlySpendUsd: quota(key?.quotas.monthlySpendUsd),
    },
  };
}

/**
 * Every setting as the API takes it, an empty input as "none" (null): a new key's body leaves the
 * nulls out; an edit sends only what differs from the key as it was (PATCH /keys/:id).
 */
function settingsOf(f: Fields): Record<string, unknown> {
  const count = (text: string) => (text.trim() === '' ? null : Number(text));
  const spend = (text: string) => (text.trim() === '' ? null : text.trim());
  return {
    name: f.name,
    permissions: f.permissions,
    expiresAt: f.expiresAt ? new Date(f.expiresAt).toISOString() : null,
    allowedIps: lines(f.ips),
    allowedOrigins: lines(f.origins),
    rateLimit:
      f.rate.perSecond || f.rate.burst
        ? { requestsPerSecond: Number(f.rate.perSecond), burst: Number(f.rate.burst) }
        : null,
    quotas: {
      dailyRequests: count(f.quotas.dailyRequests),
      monthlyRequests: count(f.quotas.monthlyRequests),
      dailySpendUsd: spend(f.quotas.dailySpendUsd),
      monthlySpendUsd: spend(f.quotas.monthlySpendUsd),
    },
  };
}

function createBody(f: Fields): Record<string, unknown> {
  const all = settingsOf(f);
  const quotas = Object.fromEntries(
    Object.entries(all.quotas as Record<string, unknown>).filter(([, value]) => value !== null),
  );
  return Object.fromEntries(
    Object.entries({ ...all, quotas: Object.keys(quotas).length > 0 ? quotas : null }).filter(
      ([field, value]) =>
        value !== null && !(Array.isArray(value) && value.length === 0 && field !== 'permissions'),
    ),
  );
}

function changes(before: Fields, after: Fields): Record<string, unknown> {
  const was = settingsOf(before);
  const now = settingsOf(after);
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(now)) {
    if (field === 'quotas') continue;
    if (!same(value, was[field])) body[field] = value;
  }
  const quotasWas = was.quotas as Record<string, unknown>;
  const quotas = Object.fromEntries(
    Object.entries(now.quotas as Record<string, unknown>).filter(
      ([field, value]) => !same(value, quotasWas[field]),
    ),
  );
  if (Object.keys(quotas).length > 0) body.quotas = quotas;
  return body;
}

/**
 * A key's settings: a new key's (POST /keys, the secret shown once by the caller), or an existing
 * key's (`existing`), where only the fields changed are sent.
 */
export function KeyForm({
  mode,
  existing,
  onCreated,
  onSaved,
}: {
  mode: Mode;
  existing?: ApiKey | undefined;
  onCreated?: (key: { name: string; key: string }) => void;
  onSaved?: () => void;
}) {
  const [initial] = useState(() => fieldsOf(existing));
  const [f, setF] = useState<Fields>(initial);
  const [note, setNote] = useState<string | null>(null);
  const action = useAction();
  const set = (change: Partial<Fields>) => setF({ ...f, ...change });

  const submit = (event: Event) => {
    event.preventDefault();
    setNote(null);
    if (!existing) {
      action.run(async () => {
        const created = await modeApi<ApiKey & { key: string }>(mode, 'POST', '/keys', createBody(f));
        setF(fieldsOf(undefined));
        onCreated?.({ name: created.name, key: created.key });
      });
      return;
    }
    const body = changes(initial, f);
    if (Object.keys(body).length === 0) {
      setNote('Nothing changed.');
      return;
    }
    action.run(async () => {
      await modeApi<ApiKey>(mode, 'PATCH', `/keys/${existing.id}`, body);
      onSaved?.();
    });
  };

  const toggle = (permission: string) =>
    set({
      permissions: f.permissions.includes(permission)
        ? f.permissions.filter((p) => p !== permission)
        : [...f.permissions, permission],
    });

  return (
    <Card title={existing ? `Edit ${existing.name}` : 'Create a key'}>
      <form
        class="key-form"
        onSubmit={submit}
        aria-label={existing ? `Edit ${existing.name}` : 'Create a key'}
      >
        <label>
          Name{' '}
          <input
            required
            maxLength={100}
            value={f.name}
            onInput={(e) => set({ name: e.currentTarget.value })}
          />
        </label>
        <fieldset>
          <legend>Permissions</legend>
          {PERMISSIONS.map((permission) => (
            <label key={permission} class="inline">
              <input
                type="checkbox"
                checked={f.permissions.includes(permission)}
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
            value={f.expiresAt}
            onInput={(e) => set({ expiresAt: e.currentTarget.value })}
          />
        </label>
        <label>
          Allowed IPs or CIDR ranges (one per line; empty: any)
          <textarea rows={2} value={f.ips} onInput={(e) => set({ ips: e.currentTarget.value })} />
        </label>
        <label>
          Allowed browser origins (one per line; empty: any)
          <textarea rows={2} value={f.origins} onInput={(e) => set({ origins: e.currentTarget.value })} />
        </label>
        <fieldset>
          <legend>Rate limit (empty: the service default)</legend>
          <label class="inline">
            Requests per second{' '}
            <input
              inputMode="decimal"
              size={6}
              value={f.rate.perSecond}
              onInput={(e) => set({ rate: { ...f.rate, perSecond: e.currentTarget.value } })}
            />
          </label>
          <label class="inline">
            Burst{' '}
            <input
              inputMode="numeric"
              size={6}
              value={f.rate.burst}
              onInput={(e) => set({ rate: { ...f.rate, burst: e.currentTarget.value } })}
            />
          </label>
        </fieldset>
        <fieldset>
          <legend>Quotas (empty: unlimited)</legend>
          {QUOTAS.map(([field, label]) => (
            <label key={field} class="inline">
              {label}{' '}
              <input
                size={8}
                value={f.quotas[field]}
                onInput={(e) => set({ quotas: { ...f.quotas, [field]: e.currentTarget.value } })}
              />
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={action.busy}>
          {existing ? 'Save changes' : 'Create key'}
        </button>
        {note && (
          <p class="muted" role="status">
            {note}
          </p>
        )}
        <ErrorNote error={action.error} />
      </form>
    </Card>
  );
}
