import { useState } from 'preact/hooks';
import { type ApiKey, api, type Mode, ok, type RequestBody } from '../api';
import { Card, ErrorNote, useAction } from '../components/ui';

type CreateBody = RequestBody<'dashboardCreateKey'>;
type UpdateBody = RequestBody<'dashboardUpdateKey'>;
type Permission = ApiKey['permissions'][number];

/**
 * What a key may read and buy. `keys` is apart: it can make keys and read the webhook signing secret,
 * so a new key gets it only when asked for (docs/dashboard.md#pages).
 */
const DATA_PERMISSIONS: Permission[] = [
  'price',
  'batch',
  'historical',
  'ai',
  'schedule',
  'markets',
  'account',
];
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
  permissions: Permission[];
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
    permissions: key ? [...key.permissions] : [...DATA_PERMISSIONS],
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

/** Every setting as the API takes it, an empty input as "none" (null). */
function settingsOf(f: Fields) {
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
  } satisfies UpdateBody;
}

/** A new key's body: what is set, the nulls and empty lists left out. */
function createBody(f: Fields): CreateBody {
  const all = settingsOf(f);
  const quotas = Object.fromEntries(
    Object.entries(all.quotas).filter(([, value]) => value !== null),
  ) as CreateBody['quotas'];
  return {
    name: all.name,
    permissions: all.permissions,
    ...(all.expiresAt ? { expiresAt: all.expiresAt } : {}),
    ...(all.allowedIps.length > 0 ? { allowedIps: all.allowedIps } : {}),
    ...(all.allowedOrigins.length > 0 ? { allowedOrigins: all.allowedOrigins } : {}),
    ...(all.rateLimit ? { rateLimit: all.rateLimit } : {}),
    ...(quotas && Object.keys(quotas).length > 0 ? { quotas } : {}),
  };
}

/** An edit's body (PATCH): only what differs from the key as it was. */
function changes(before: Fields, after: Fields): UpdateBody {
  const was = settingsOf(before);
  const now = settingsOf(after);
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const body: UpdateBody = {};
  const changed = <F extends Exclude<keyof typeof now, 'quotas'>>(field: F) => {
    if (!same(now[field], was[field])) Object.assign(body, { [field]: now[field] });
  };
  for (const field of [
    'name',
    'permissions',
    'expiresAt',
    'allowedIps',
    'allowedOrigins',
    'rateLimit',
  ] as const)
    changed(field);
  const quotas = Object.fromEntries(
    Object.entries(now.quotas).filter(([field, value]) => !same(value, was.quotas[field as QuotaField])),
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
  onSaved?: (key: ApiKey) => void;
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
        const created = await ok(
          api.POST('/dashboard/api/{mode}/keys', { params: { path: { mode } }, body: createBody(f) }),
        );
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
      const saved = await ok(
        api.PATCH('/dashboard/api/{mode}/keys/{keyId}', {
          params: { path: { mode, keyId: existing.id } },
          body,
        }),
      );
      onSaved?.(saved);
    });
  };

  const toggle = (permission: Permission) =>
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
          {DATA_PERMISSIONS.map((permission) => (
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
        <fieldset>
          <legend>Key management</legend>
          <label class="inline">
            <input type="checkbox" checked={f.permissions.includes('keys')} onChange={() => toggle('keys')} />{' '}
            keys: can create, change and revoke keys and read the webhook signing secret
          </label>
          <p class="warning-line">
            Only for a key that manages other keys: whoever holds it can make a key with every permission.
          </p>
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
