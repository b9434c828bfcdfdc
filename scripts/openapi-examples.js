// Records the examples of the OpenAPI document from real answers: a sandbox account on a fresh
// embedded database, the demo markets, and one request per documented answer. The answers are
// written to src/http/openapi-examples.json, keyed by component name; the document attaches them
// (src/http/openapi-document.ts) and a test checks each against its schema.
//
//   npm run build && node scripts/openapi-examples.js
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAiQueue } from '../dist/ai/queue.js';
import { createResolver } from '../dist/ai/resolver.js';
import { openAnswerCache } from '../dist/evaluation/cache.js';
import { evaluateSet } from '../dist/evaluation/evaluate.js';
import { readLabelledSet } from '../dist/evaluation/read-set.js';
import { buildReport } from '../dist/evaluation/report.js';
import { publishScorecard } from '../dist/evaluation/scorecard.js';
import { scorecardSummary } from '../dist/evaluation/summary.js';
import { aiJobResolver } from '../dist/jobs/ai.js';
import { jobQueueHandler } from '../dist/jobs/runner.js';
import { systemClock } from '../dist/lib/clock.js';
import { silentLog } from '../dist/logger.js';
import { createPriceService } from '../dist/prices/index.js';
import { WorkQueue } from '../dist/queue/queue.js';
import { recordAccountEvent } from '../dist/webhooks/index.js';
import { webhookOutbox } from '../dist/webhooks/outbox.js';
import { signedRequest } from '../dist/webhooks/signing.js';
import { recordErrors } from './error-examples.js';
import { recordRareErrors } from './rare-error-examples.js';
import { withSandboxApp } from './sandbox-app.js';

await withSandboxApp(async (app, key, { db, config, hold }) => {
  async function call(method, url, payload) {
    const response = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
      ...(payload === undefined ? {} : { payload }),
    });
    if (response.statusCode !== 200)
      throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  }

  // Secrets never appear in the document, not even a throwaway database's.
  const FAKE_KEY = 'pk_test_3qLm9XwZ4rTbN8vKc2YpHd7sFgJ6aE1u';
  const FAKE_WEBHOOK_SECRET = 'whsec_c2lieWwtZXhhbXBsZS1zZWNyZXQtbm90LXJlYWwtMDAwMDA=';
  const examples = {};
  // Request examples name a time well ahead (the 1st of the month, six months on, at noon UTC): a
  // reader trying one gets a schedule the service takes (within the 365 days a job may be ahead).
  const now = new Date();
  const later = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 6, 1, 12)).toISOString();
  const ahead = later.replace(/\.\d{3}Z$/, 'Z');
  const callbackUrl = 'https://hooks.example.com/sibyl';

  examples.Account = { ...(await call('GET', '/account')), webhookSecret: FAKE_WEBHOOK_SECRET };
  examples.AttestationKeys = await call('GET', '/attestation/keys');
  examples.PriceResult = await call('GET', '/price/SOL');
  examples.Attestation = (await call('GET', '/price/SOL?attest=true')).attestation;
  // An event of GET /stream/prices carries the single price without its cost fields (src/streams/price-feed.ts).
  const { costUsd: _cost, remainingBalanceUsd: _balance, ...priceEvent } = examples.PriceResult;
  examples.PriceStreamEvent = priceEvent;
  examples.BatchPriceRequest = { symbols: ['SOL', 'JUP', 'BONK'] };
  examples.BatchPriceResult = await call('POST', '/price/batch', examples.BatchPriceRequest);
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const from = new Date(hour - 3 * 3_600_000).toISOString();
  const to = new Date(hour).toISOString();
  examples.PriceHistory = await call(
    'GET',
    `/historical/price/SOL?startTime=${from}&endTime=${to}&interval=1h`,
  );
  examples.CreateKeyRequest = { name: 'trading bot', permissions: ['price', 'markets'] };
  const created = await call('POST', '/keys', examples.CreateKeyRequest);
  examples.CreatedKey = { ...created, key: FAKE_KEY };
  // The new key's first request, so that the key objects below show when it was last used (the
  // time is written after the answer, docs/api.md#last-used: waited for here).
  await app.inject({
    method: 'GET',
    url: '/api/v1/markets?pageSize=1',
    headers: { authorization: `Bearer ${created.key}` },
  });
  while (
    (await db.query('SELECT last_used_at FROM api_keys WHERE id = $1', [created.id]))[0]?.last_used_at == null
  )
    await new Promise((resolve) => setTimeout(resolve, 5));
  examples.UpdateKeyRequest = { name: 'trading bot (eu)', allowedIps: ['203.0.113.0/24'] };
  examples.UpdateKeyResponse = await call('PATCH', `/keys/${created.id}`, examples.UpdateKeyRequest);
  examples.ApiKeyList = await call('GET', '/keys');
  examples.MarketList = await call('GET', '/markets?status=OPEN&pageSize=2');
  examples.MarketDetail = await call('GET', `/markets/${examples.MarketList.markets[0].id}`);
  examples.MarketHistory = await call(
    'GET',
    `/markets/${examples.MarketList.markets[0].id}/history?interval=1d&outcome=0`,
  );
  examples.MarketCandle = examples.MarketHistory.candles.at(-1);
  examples.MarketTrades = await call('GET', `/markets/${examples.MarketList.markets[0].id}/trades?limit=2`);
  examples.MarketTrade = examples.MarketTrades.trades[0];
  // An `event: market` of GET /stream/markets is the moving part of the detail (src/markets/log/market-state.ts).
  examples.MarketStreamEvent = {
    requestId: priceEvent.requestId,
    ...marketStreamEvent(examples.MarketDetail),
  };
  examples.PriceScheduleRequest = { symbol: 'SOL', resolutionTimestamp: ahead, callbackUrl };
  examples.SchedulePriceCheckResponse = await call('POST', '/price/schedule', examples.PriceScheduleRequest);
  examples.ListPriceJobsResponse = await call('GET', '/price/scheduled?pageSize=1');
  examples.GetPriceJobResponse = await call(
    'GET',
    `/price/scheduled/${examples.SchedulePriceCheckResponse.jobId}`,
  );
  examples.CancelPriceJobResponse = await call(
    'POST',
    `/price/scheduled/${examples.SchedulePriceCheckResponse.jobId}/cancel`,
  );
  examples.AiResolveRequest = {
    question: 'Will SOL close above $200 on 2026-12-31 (UTC)?',
    outcomes: ['Yes', 'No'],
    context: 'Use the daily close on major venues.',
    callbackUrl,
  };
  examples.ResolveWithAiResponse = await call('POST', '/ai/resolve', examples.AiResolveRequest);
  // The AI resolution runs in the worker: here, its queue drained in-process.
  await createAiQueue({
    db,
    clock: systemClock,
    log: silentLog,
    resolver: createResolver(config.ai, systemClock),
    callbacks: webhookOutbox,
    config: config.ai,
  }).drain();
  examples.AiRequestRecord = await call('GET', `/ai/request/${examples.ResolveWithAiResponse.requestId}`);
  // The callback that resolution sent (its outbox row), for docs/webhooks.md: the body as delivered,
  // but for `signature`, which each attempt appends (docs/webhooks.md#verifying).
  const [callbackRow] = await db.query(
    "SELECT payload FROM webhook_deliveries WHERE type = 'ai' AND request_id = $1",
    [examples.ResolveWithAiResponse.requestId],
  );
  const aiCallback = JSON.parse(callbackRow.payload);

  // A price check due two seconds from now, run by the job queue drained in-process once due: its
  // callback is the price callback of docs/webhooks.md.
  const soon = await call('POST', '/price/schedule', {
    symbol: 'SOL',
    resolutionTimestamp: new Date(Date.now() + 2000).toISOString(),
    callbackUrl,
  });
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const jobDeps = { db, clock: systemClock, log: silentLog };
  await new WorkQueue(
    jobQueueHandler({
      ...jobDeps,
      prices: createPriceService(config.prices, systemClock, []),
      ai: aiJobResolver(createResolver(config.ai, systemClock)),
      callbacks: webhookOutbox,
      settings: config.jobs,
    }),
    jobDeps,
  ).drain();
  const [priceRow] = await db.query(
    "SELECT payload FROM webhook_deliveries WHERE type = 'price' AND request_id = $1",
    [soon.requestId],
  );
  if (!priceRow) throw new Error('the scheduled price check sent no callback');
  const priceCallback = JSON.parse(priceRow.payload);

  examples.PriceScheduledRequest = { symbol: 'JUP', scheduledFor: ahead };
  examples.SchedulePriceCheckAtResponse = await call(
    'POST',
    '/price/scheduled',
    examples.PriceScheduledRequest,
  );
  examples.AiScheduleRequest = {
    question: 'Will the Solana network process more than 100M transactions on 2026-12-01 (UTC)?',
    outcomes: ['Yes', 'No'],
    resolutionTimestamp: ahead,
    callbackUrl,
  };
  examples.ScheduleAiResolutionResponse = await call('POST', '/ai/schedule', examples.AiScheduleRequest);
  const aiJob = examples.ScheduleAiResolutionResponse.jobId;
  examples.ListAiJobsResponse = await call('GET', '/ai/scheduled?pageSize=1');
  examples.GetAiJobResponse = await call('GET', `/ai/scheduled/${aiJob}`);
  examples.CancelAiJobResponse = await call('POST', `/ai/scheduled/${aiJob}/cancel`);

  examples.WebhookTestRequest = { callbackUrl };
  examples.SendTestWebhookResponse = await call('POST', '/webhooks/test', examples.WebhookTestRequest);
  examples.WebhookDeliveryList = await call('GET', '/webhooks/deliveries?pageSize=2');
  const delivery = examples.WebhookDeliveryList.deliveries[0].id;
  examples.WebhookDelivery = await call('GET', `/webhooks/deliveries/${delivery}`);
  examples.RedeliverWebhookResponse = await call('POST', `/webhooks/deliveries/${delivery}/redeliver`);
  // No worker runs here: the redelivered delivery is still PENDING, so cancelling it answers CANCELLED.
  examples.CancelWebhookDeliveryResponse = await call('POST', `/webhooks/deliveries/${delivery}/cancel`);
  // One event of GET /webhooks/stream as the stream writes it (src/webhooks/stream-source.ts): the test
  // event's stored payload, signed like a delivery — under the fake secret, as no real one is shown.
  const [streamed] = await db.query('SELECT id, payload FROM webhook_deliveries WHERE id = $1', [delivery]);
  const signedEvent = signedRequest(streamed.id, streamed.payload, [FAKE_WEBHOOK_SECRET], new Date());
  examples.WebhookStreamEvent = {
    requestId: examples.WebhookDelivery.requestId,
    id: streamed.id,
    headers: signedEvent.headers,
    body: signedEvent.body,
  };
  examples.GetWebhookSecretResponse = {
    ...(await call('GET', '/account/webhook-secret')),
    webhookSecret: FAKE_WEBHOOK_SECRET,
  };
  examples.RotateWebhookSecretResponse = {
    ...(await call('POST', '/account/webhook-secret/rotate')),
    webhookSecret: FAKE_WEBHOOK_SECRET,
  };

  // Account events (docs/webhooks.md#account-events): an endpoint's life, its secrets replaced by the
  // fake one as no real one is shown; the balance alerts' thresholds.
  examples.AccountAlerts = await call('PUT', '/account/alerts', { lowBalanceUsd: ['5.00', '1.00'] });
  const endpoint = await call('POST', '/webhooks/endpoints', {
    url: callbackUrl,
    eventTypes: ['deposit.credited', 'balance.low'],
    description: 'Treasury bot',
  });
  examples.CreatedWebhookEndpoint = { ...endpoint, secret: FAKE_WEBHOOK_SECRET };
  examples.UpdateWebhookEndpointResponse = await call('PATCH', `/webhooks/endpoints/${endpoint.id}`, {
    eventTypes: ['*'],
  });
  examples.RotateWebhookEndpointSecretResponse = {
    ...(await call('POST', `/webhooks/endpoints/${endpoint.id}/rotate-secret`)),
    secret: FAKE_WEBHOOK_SECRET,
  };
  examples.WebhookEndpoint = await call('GET', `/webhooks/endpoints/${endpoint.id}`);
  examples.WebhookEndpointList = await call('GET', '/webhooks/endpoints');
  examples.DeleteWebhookEndpointResponse = await call('DELETE', `/webhooks/endpoints/${endpoint.id}`);

  // One event of each type, recorded by the verb that records them (src/webhooks/events.ts) for an
  // endpoint subscribed to all, with data taken from the answers above: the catalog's examples, and
  // the endpoint's deliveries.
  const all = await call('POST', '/webhooks/endpoints', { url: callbackUrl, eventTypes: ['*'] });
  const accountId = examples.Account.id;
  const aiRequestId = examples.ResolveWithAiResponse.requestId;
  const priceJob = examples.GetPriceJobResponse;
  const failure = { code: 'INTERNAL_ERROR', message: 'The job could not be run; it was refunded' };
  /** @type {Record<string, [any, any]>} */
  const events = {
    ResolutionCompletedEvent: [
      'resolution.completed',
      { requestId: aiRequestId, jobId: null, result: examples.AiRequestRecord.result },
    ],
    ResolutionFailedEvent: [
      'resolution.failed',
      {
        requestId: aiRequestId,
        jobId: null,
        error: { code: 'AI_CONSENSUS_FAILED', message: 'Only 2 of 4 models gave a valid answer' },
      },
    ],
    JobCompletedEvent: [
      'job.completed',
      {
        jobId: priceJob.jobId,
        type: 'price',
        requestId: priceJob.requestId ?? examples.SchedulePriceCheckResponse.requestId,
        result: examples.PriceResult,
      },
    ],
    JobFailedEvent: [
      'job.failed',
      {
        jobId: priceJob.jobId,
        type: 'price',
        requestId: examples.SchedulePriceCheckResponse.requestId,
        error: failure,
      },
    ],
    DepositCreditedEvent: [
      'deposit.credited',
      {
        id: 'dep_7d2K9xQmP4vLr8NcY3tWfB',
        status: 'credited',
        token: 'USDC',
        amount: '25.000000',
        usdValue: '25.00',
        rateUsd: '1.00',
        signature: '5VfYmGBjvQKe3bZsP8nUoQ8hYxKz2Rr7cN1fT4wJ9aLmD6pXsE3gH2kW8qB5nR4tY7uI1oP9aS6dF3gH8jK2lZ',
        slot: 312456789,
        reference: null,
        memo: null,
        createdAt: later,
        balanceUsd: '125.00',
      },
    ],
    BalanceLowEvent: ['balance.low', { thresholdUsd: '5.00', balanceUsd: '4.98', accountId }],
    BalanceDepletedEvent: ['balance.depleted', { accountId, balanceUsd: '0.00' }],
    KeyExpiringEvent: [
      'key.expiring',
      {
        keyId: examples.ApiKey?.id ?? examples.ApiKeyList.keys[0].id,
        name: 'trading bot',
        expiresAt: later,
        daysLeft: 7,
      },
    ],
    EndpointDisabledEvent: [
      'endpoint.disabled',
      {
        endpointId: endpoint.id,
        url: callbackUrl,
        reason: 'failing',
        failingSince: later,
        failedDeliveries: 20,
      },
    ],
  };
  for (const [name, [type, data]] of Object.entries(events)) {
    const at = new Date();
    const recorded = /** @type {{ id: string }} */ (
      await recordAccountEvent(db, { accountId, mode: 'sandbox', type, data, at })
    );
    examples[name] = { id: recorded.id, type, createdAt: at.toISOString(), mode: 'sandbox', data };
  }
  examples.WebhookEndpointDeliveryList = await call(
    'GET',
    `/webhooks/endpoints/${all.id}/deliveries?limit=2`,
  );
  examples.WebhookEndpointDelivery = examples.WebhookEndpointDeliveryList.deliveries[0];
  examples.RecoverWebhookEndpointResponse = await call('POST', `/webhooks/endpoints/${all.id}/recover`, {
    since: new Date(Date.now() - 3_600_000).toISOString(),
  });

  const spare = await call('POST', '/keys', { name: 'spare', permissions: ['price'] });
  const rotated = await call('POST', `/keys/${spare.id}/rotate`);
  examples.RotateKeyResponse = { ...rotated, newKey: { ...rotated.newKey, key: FAKE_KEY } };
  examples.RevokeKeyResponse = await call('DELETE', `/keys/${rotated.newKey.id}`);
  examples.TransactionList = await call('GET', '/account/transactions?limit=3');
  examples.AccountUsage = await call('GET', '/account/usage?groupBy=operation');
  examples.AiRequestList = await call('GET', '/ai/requests?pageSize=2');

  // The scorecard: the project's own labelled set evaluated on the sandbox models and published,
  // as `sibyl ai evaluate test/evaluation/sets/sibyl.jsonl --models sandbox --publish` does.
  const set = await readLabelledSet([
    new URL('../test/evaluation/sets/sibyl.jsonl', import.meta.url).pathname,
  ]);
  const resolver = createResolver(config.ai, systemClock);
  const cache = await openAnswerCache(join(mkdtempSync(join(tmpdir(), 'sibyl-examples-')), 'cache.jsonl'));
  const startedAt = new Date();
  /** @type {import('../dist/evaluation/metrics.js').QuestionResult[]} */
  const results = [];
  const evaluation = await evaluateSet({
    resolver,
    mode: 'sandbox',
    questions: set.questions,
    concurrency: 8,
    confidenceThreshold: 0.75,
    cache,
    onResult: (result) => void results.push(result),
  });
  await cache.close();
  const report = buildReport(results, {
    set,
    mode: 'sandbox',
    modelsUsed: resolver.models('sandbox').map((m) => m.name),
    confidenceThreshold: 0.75,
    target: 0.97,
    interrupted: false,
    startedAt,
    finishedAt: new Date(),
    cachedAnswers: evaluation.cachedAnswers,
    askedAnswers: evaluation.askedAnswers,
  });
  // Its own 404 first: nothing is published yet.
  const unpublished = (
    await app.inject({
      method: 'GET',
      url: '/api/v1/ai/scorecard',
      headers: { authorization: `Bearer ${key}` },
    })
  ).json();
  await publishScorecard(db, scorecardSummary(report));
  examples.AiScorecard = await call('GET', '/ai/scorecard');

  // Nested components: taken from the answers that contain them.
  examples.PriceSource = examples.PriceResult.sources[0];
  examples.TokenRef = examples.PriceResult.token;
  examples.BatchPriceItem = examples.BatchPriceResult.prices[0];
  examples.PriceHistoryPoint = examples.PriceHistory.dataPoints[0];
  examples.ApiKey = examples.ApiKeyList.keys.find((k) => k.lastUsedAt) ?? examples.ApiKeyList.keys[0];
  examples.MarketSummary = examples.MarketList.markets[0];
  examples.JobSummary = examples.ListPriceJobsResponse.jobs[0];
  examples.Transaction = examples.TransactionList.transactions[0];
  examples.AiResult = examples.AiRequestRecord.result;
  examples.AiVote = examples.AiRequestRecord.votes[0];
  examples.AiRequestSummary = examples.AiRequestList.requests[0];
  examples.WebhookDeliverySummary = examples.WebhookDeliveryList.deliveries[0];

  const errors = {
    ...(await recordErrors(app, key, { db, cancelledDelivery: delivery })),
    ...(await recordRareErrors(app, key, { db, hold })),
    'getAiScorecard:NOT_FOUND': unpublished,
  };
  const errorsOut = new URL('../src/http/openapi-error-examples.json', import.meta.url);
  const sortedErrors = Object.fromEntries(Object.entries(errors).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(errorsOut, `${JSON.stringify(sortedErrors, null, 2)}\n`);
  process.stdout.write(
    `${Object.keys(sortedErrors).length} error answers written to src/http/openapi-error-examples.json\n`,
  );

  // The docs' examples (a `<!-- example: Name -->` line before a ```json block): rewritten from
  // these answers, and checked against their schemas by test/http/docs-examples.test.ts.
  examples.AiCallback = aiCallback;
  examples.PriceCallback = priceCallback;
  const docsExamples = examples;
  for (const file of readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md'))) {
    const url = new URL(`../docs/${file}`, import.meta.url);
    const text = readFileSync(url, 'utf8');
    const next = text.replace(/(<!-- example: (\w+) -->\n```json\n)[\s\S]*?\n```/g, (_, head, name) => {
      if (!(name in docsExamples)) throw new Error(`docs/${file}: no recorded example ${name}`);
      return `${head}${JSON.stringify(docsExamples[name], null, 2)}\n\`\`\``;
    });
    if (next !== text) writeFileSync(url, next);
  }

  const out = new URL('../src/http/openapi-examples.json', import.meta.url);
  const sorted = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(out, `${JSON.stringify(sorted, null, 2)}\n`);
  process.stdout.write(`${Object.keys(sorted).length} examples written to src/http/openapi-examples.json\n`);
});

function marketStreamEvent(detail) {
  const { resolution } = detail;
  return {
    id: detail.id,
    status: detail.status,
    outcomes: detail.outcomes.map(({ index, label, lastPrice, probability }) => ({
      index,
      label,
      lastPrice,
      probability,
    })),
    tradingStats: {
      totalVolume: detail.tradingStats.totalVolume,
      totalTrades: detail.tradingStats.totalTrades,
    },
    resolution:
      resolution.winningOutcomeIndex === null
        ? null
        : { winningOutcomeIndex: resolution.winningOutcomeIndex, resolvedAt: resolution.resolvedAt },
  };
}
