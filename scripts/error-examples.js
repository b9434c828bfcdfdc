// Records one real error answer per code of the vocabulary, for the OpenAPI document's error
// responses (scripts/openapi-examples.js writes them to src/http/openapi-error-examples.json; the
// document shows each under the status that carries it, src/http/openapi-document.ts). Each answer
// is provoked as a client would meet it: a missing key, a key without the permission, a balance too
// small, a quota used up. A code whose answer is route-specific (NOT_FOUND, JOB_NOT_FOUND) is also
// recorded per operation, as `operationId:CODE`.
import { createAccount, setAccountStatus } from '../dist/accounts/accounts.js';
import { createContext } from '../dist/context.js';
import { createKey, revokeKey } from '../dist/keys/keys.js';
import { PERMISSIONS } from '../dist/keys/permissions.js';
import { creditDeposit } from '../dist/ledger/index.js';
import { systemClock } from '../dist/lib/clock.js';
import { clearSecretBox } from '../dist/webhooks/secret-box.js';

/**
 * Codes shown without an example: no request provokes them on a service that works as it should.
 * (The codes of rare moments — a retry racing its first request, venues down, a server stopping, a
 * wallet another account holds — are recorded by scripts/rare-error-examples.js.)
 */
export const UNRECORDED = {
  INTERNAL_ERROR: 'a fault of the service',
  ACCOUNT_NOT_FOUND: 'the key of an account deleted by the operator',
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function recordErrors(app, key, { db, cancelledDelivery }) {
  const found = {};
  const record = async (label, expectedCode, options) => {
    const response = await app.inject(options);
    const body = response.json();
    if (body.code !== expectedCode) {
      throw new Error(`${label}: expected ${expectedCode}, got ${response.statusCode} ${response.body}`);
    }
    found[label] = body;
    return body;
  };
  const api = (method, url, bearer, extra = {}) => ({
    method,
    url: `/api/v1${url}`,
    ...extra,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(extra.headers ?? {}) },
  });
  const ctx = createContext(db, systemClock);
  const actorOf = (accountId) => ({ accountId, permissions: PERMISSIONS, expiresAt: null });
  const issue = (accountId, settings, permissions = PERMISSIONS) =>
    createKey(ctx, {
      actor: actorOf(accountId),
      settings: { name: 'example', permissions: [...permissions], ...settings },
    });
  const keyFor = async (accountId, settings, permissions) =>
    (await issue(accountId, settings, permissions)).key;
  const account = (await app.inject(api('GET', '/account', key))).json();

  // Authentication and access.
  await record('INVALID_API_KEY', 'INVALID_API_KEY', api('GET', '/account', null));
  const soon = await keyFor(account.id, { expiresAt: new Date(Date.now() + 1500).toISOString() });
  const revoked = await issue(account.id, {});
  await revokeKey(ctx, { actor: actorOf(account.id), keyId: revoked.record.id });
  await record('API_KEY_REVOKED', 'API_KEY_REVOKED', api('GET', '/account', revoked.key));
  await sleep(1600);
  await record('API_KEY_EXPIRED', 'API_KEY_EXPIRED', api('GET', '/account', soon));
  const priceOnly = await keyFor(account.id, {}, ['price']);
  await record('PERMISSION_DENIED', 'PERMISSION_DENIED', api('GET', '/account', priceOnly));
  const officeOnly = await keyFor(account.id, { allowedIps: ['203.0.113.0/24'] });
  await record('IP_NOT_ALLOWED', 'IP_NOT_ALLOWED', api('GET', '/account', officeOnly));
  const appOnly = await keyFor(account.id, { allowedOrigins: ['https://app.example.com'] });
  await record(
    'ORIGIN_NOT_ALLOWED',
    'ORIGIN_NOT_ALLOWED',
    api('GET', '/account', appOnly, { headers: { origin: 'https://elsewhere.example.org' } }),
  );
  const slow = await keyFor(account.id, { rateLimit: { requestsPerSecond: 0.001, burst: 1 } });
  await app.inject(api('GET', '/account', slow));
  await record('RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED', api('GET', '/account', slow));
  const suspended = await createAccount(ctx, { mode: 'sandbox' }, clearSecretBox);
  const suspendedKey = await keyFor(suspended.id, {});
  await setAccountStatus(ctx, { accountId: suspended.id, status: 'suspended' });
  await record('ACCOUNT_SUSPENDED', 'ACCOUNT_SUSPENDED', api('GET', '/account', suspendedKey));

  // Money and quotas.
  const broke = await createAccount(ctx, { mode: 'sandbox' }, clearSecretBox);
  await record(
    'INSUFFICIENT_BALANCE',
    'INSUFFICIENT_BALANCE',
    api('GET', '/price/SOL', await keyFor(broke.id, {})),
  );
  const capped = await keyFor(account.id, { quotas: { dailyRequests: 0 } });
  await record('QUOTA_EXCEEDED', 'QUOTA_EXCEEDED', api('GET', '/price/SOL', capped));
  const live = await createAccount(ctx, { mode: 'live' }, clearSecretBox);
  // Funded: the balance is checked before the models are (docs/api.md), so an empty one would say 402.
  await creditDeposit(ctx, {
    accountId: live.id,
    amountMicros: 1_000_000n,
    reference: 'example:ai-unavailable',
  });
  await record(
    'AI_UNAVAILABLE',
    'AI_UNAVAILABLE',
    api('POST', '/ai/resolve', await keyFor(live.id, {}), {
      payload: {
        question: 'Will it rain in Lisbon tomorrow?',
        outcomes: ['Yes', 'No'],
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    }),
  );

  // Input.
  await record('VALIDATION_ERROR', 'VALIDATION_ERROR', api('GET', '/markets?status=open', key));
  await record('INVALID_SYMBOL', 'INVALID_SYMBOL', api('GET', '/price/SOL-USD', key));
  await record('SYMBOL_NOT_FOUND', 'SYMBOL_NOT_FOUND', api('GET', '/price/NOSUCHTOKEN', key));
  await record(
    'BATCH_LIMIT_EXCEEDED',
    'BATCH_LIMIT_EXCEEDED',
    api('POST', '/price/batch', key, { payload: { symbols: Array.from({ length: 51 }, (_, i) => `T${i}`) } }),
  );
  await record(
    'INVALID_TIMESTAMP',
    'INVALID_TIMESTAMP',
    api('GET', '/historical/price/SOL?startTime=2026-13-01T00:00:00Z&endTime=2026-11-02T00:00:00Z', key),
  );
  await record(
    'TIMESTAMP_IN_PAST',
    'TIMESTAMP_IN_PAST',
    api('POST', '/price/schedule', key, {
      payload: {
        symbol: 'SOL',
        resolutionTimestamp: '2026-01-01T00:00:00Z',
        callbackUrl: 'https://hooks.example.com/sibyl',
      },
    }),
  );
  await record(
    'PAYLOAD_TOO_LARGE',
    'PAYLOAD_TOO_LARGE',
    api('POST', '/price/batch', key, { payload: { symbols: ['x'.repeat(200_000)] } }),
  );
  await record(
    'UNSUPPORTED_MEDIA_TYPE',
    'UNSUPPORTED_MEDIA_TYPE',
    api('POST', '/price/batch', key, {
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      payload: '{"symbols":["SOL"]}',
    }),
  );
  await record('URI_TOO_LONG', 'URI_TOO_LONG', api('GET', `/markets/${'m'.repeat(101)}`, key));
  const once = { 'idempotency-key': 'order-7731' };
  await app.inject(api('POST', '/price/batch', key, { headers: once, payload: { symbols: ['SOL'] } }));
  await record(
    'IDEMPOTENCY_KEY_REUSED',
    'IDEMPOTENCY_KEY_REUSED',
    api('POST', '/price/batch', key, { headers: once, payload: { symbols: ['JUP'] } }),
  );

  // State.
  const job = (
    await app.inject(
      api('POST', '/price/scheduled', key, {
        payload: { symbol: 'SOL', scheduledFor: new Date(Date.now() + 30 * 86_400_000).toISOString() },
      }),
    )
  ).json();
  await app.inject(api('POST', `/price/scheduled/${job.jobId}/cancel`, key));
  await record(
    'JOB_CANNOT_CANCEL',
    'JOB_CANNOT_CANCEL',
    api('POST', `/price/scheduled/${job.jobId}/cancel`, key),
  );
  const spare = (await app.inject(api('POST', '/keys', key, { payload: { name: 'spare' } }))).json();
  await app.inject(api('POST', `/keys/${spare.id}/rotate`, key));
  await record(
    'KEY_ROTATION_IN_PROGRESS',
    'KEY_ROTATION_IN_PROGRESS',
    api('POST', `/keys/${spare.id}/rotate`, key),
  );
  const crowded = await createAccount(ctx, { mode: 'sandbox' }, clearSecretBox);
  const crowdedKey = await keyFor(crowded.id, {});
  for (let i = 0; i < 30; i++) {
    const response = await app.inject(api('POST', '/keys', crowdedKey, { payload: { name: `bot ${i}` } }));
    if (response.statusCode !== 200) break;
  }
  await record(
    'MAX_KEYS_EXCEEDED',
    'MAX_KEYS_EXCEEDED',
    api('POST', '/keys', crowdedKey, { payload: { name: 'one more' } }),
  );
  // An account holding its 10 webhook endpoints (docs/webhooks.md#endpoints).
  const hooked = await createAccount(ctx, { mode: 'sandbox' }, clearSecretBox);
  const hookedKey = await keyFor(hooked.id, {});
  const endpoint = { url: 'https://example.com/hooks/sibyl', eventTypes: ['*'] };
  for (let i = 0; i < 10; i++)
    await app.inject(api('POST', '/webhooks/endpoints', hookedKey, { payload: endpoint }));
  await record(
    'MAX_ENDPOINTS_EXCEEDED',
    'MAX_ENDPOINTS_EXCEEDED',
    api('POST', '/webhooks/endpoints', hookedKey, { payload: endpoint }),
  );
  // A delivery already cancelled (scripts/openapi-examples.js) cannot be cancelled again.
  await record(
    'DELIVERY_CANNOT_CANCEL',
    'DELIVERY_CANNOT_CANCEL',
    api('POST', `/webhooks/deliveries/${cancelledDelivery}/cancel`, key),
  );
  await record('NOT_FOUND', 'NOT_FOUND', api('GET', '/no-such-route', key));
  // A key holding its limit of open event streams (3 by default): they stay open until the app closes.
  const streamer = await keyFor(account.id, {});
  for (let i = 0; i < 3; i++) void app.inject(api('GET', '/webhooks/stream', streamer));
  while (app.services.streams.size < 3) await sleep(10);
  await record('STREAM_LIMIT_EXCEEDED', 'STREAM_LIMIT_EXCEEDED', api('GET', '/webhooks/stream', streamer));

  // Route-specific answers: each operation that can say NOT_FOUND or JOB_NOT_FOUND of what its path names.
  const document = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/api/v1/') || !path.includes('{')) continue;
    for (const [method, operation] of Object.entries(item)) {
      const codes = operation.responses['404']?.content['application/json'].schema.properties.code.enum ?? [];
      const code = codes.find((c) => c === 'NOT_FOUND' || c === 'JOB_NOT_FOUND');
      if (!code) continue;
      const url = path
        .replace('/api/v1', '')
        .replace(/\{(\w+)\}/g, (_, name) =>
          name === 'keyId'
            ? 'key_0000000000000000000000'
            : name === 'endpointId'
              ? `we_${'1'.repeat(24)}`
              : `${name === 'jobId' ? 'job' : 'x'}_0000000000000000000000`,
        );
      const rename = path.includes('{endpointId}') ? { description: 'renamed' } : { name: 'renamed' };
      const payload =
        method === 'patch'
          ? rename
          : path.endsWith('/recover')
            ? { since: new Date(Date.now() - 3_600_000).toISOString() }
            : undefined;
      await record(
        `${operation.operationId}:${code}`,
        code,
        api(method.toUpperCase(), url, key, payload ? { payload } : {}),
      );
    }
  }

  // The dashboard's own codes.
  // Fetch Metadata as the dashboard's page sends it: a read with neither it nor Origin is refused first.
  await record('SESSION_EXPIRED', 'SESSION_EXPIRED', {
    method: 'GET',
    url: '/dashboard/api/auth/session',
    headers: { 'sec-fetch-site': 'same-origin' },
  });
  return found;
}
