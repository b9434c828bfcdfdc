import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics. Recording is a few hash lookups per event (microseconds, beside
 * a request's ~1 ms of CPU), so it is always on; only the listener that serves them is optional.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'sibyl_' });

const httpRequests = new Counter({
  name: 'sibyl_http_requests_total',
  help: 'HTTP answers by route (its pattern), method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

const httpDuration = new Histogram({
  name: 'sibyl_http_request_duration_seconds',
  help: 'Time from the request received to the answer sent, by route and method',
  labelNames: ['route', 'method'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [registry],
});

const charges = new Counter({
  name: 'sibyl_charges_total',
  help: 'Committed charges by operation',
  labelNames: ['operation'] as const,
  registers: [registry],
});

const chargedUsd = new Counter({
  name: 'sibyl_charged_usd_total',
  help: 'USD charged by operation (committed charges)',
  labelNames: ['operation'] as const,
  registers: [registry],
});

const refunds = new Counter({
  name: 'sibyl_refunds_total',
  help: 'Committed refunds by the operation of the charge they give back',
  labelNames: ['operation'] as const,
  registers: [registry],
});

const refundedUsd = new Counter({
  name: 'sibyl_refunded_usd_total',
  help: 'USD refunded by operation (committed refunds)',
  labelNames: ['operation'] as const,
  registers: [registry],
});

const authFailures = new Counter({
  name: 'sibyl_auth_failures_total',
  help: 'Requests refused by authentication or access rules, by error code',
  labelNames: ['code'] as const,
  registers: [registry],
});

const venueCalls = new Counter({
  name: 'sibyl_venue_calls_total',
  help: 'Calls to upstream price venues by venue, kind (quote or candles) and outcome (ok, not_listed, or the failure)',
  labelNames: ['venue', 'kind', 'outcome'] as const,
  registers: [registry],
});

const chargeBatchSize = new Histogram({
  name: 'sibyl_charge_batch_size',
  help: 'Charges committed together by one coalesced ledger statement',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  registers: [registry],
});

const workItems = new Counter({
  name: 'sibyl_work_items_total',
  help: 'Durable work items by queue and outcome: claimed, done, or failed (the work threw; the item comes back after its lease)',
  labelNames: ['queue', 'outcome'] as const,
  registers: [registry],
});

const workClaimFailures = new Counter({
  name: 'sibyl_work_claim_failures_total',
  help: 'Claims of durable work that failed (the database refused or was unreachable), by queue',
  labelNames: ['queue'] as const,
  registers: [registry],
});

const workInFlight = new Gauge({
  name: 'sibyl_work_in_flight',
  help: 'Durable work items this process is working on, by queue',
  labelNames: ['queue'] as const,
  registers: [registry],
});

const webhookAttempts = new Counter({
  name: 'sibyl_webhook_attempts_total',
  help: 'Webhook delivery attempts by what they led to: delivered, retrying, stopped (410), callback_failed (the last attempt failed), lease_lost',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

const ledgerReconciles = new Gauge({
  name: 'sibyl_ledger_reconciles',
  help: "The worker's last ledger reconciliation: 1 when every invariant held, 0 when one did not",
  registers: [registry],
});

const ledgerReconciledAt = new Gauge({
  name: 'sibyl_ledger_reconciled_timestamp_seconds',
  help: "When the worker's last ledger reconciliation finished (Unix time)",
  registers: [registry],
});

const eventStreamsOpen = new Gauge({
  name: 'sibyl_event_streams_open',
  help: 'Event streams this process holds open, by the route that opened them (the webhook stream, price and market streams)',
  labelNames: ['route'] as const,
  registers: [registry],
});

const evidenceDropped = new Counter({
  name: 'sibyl_ai_evidence_dropped_total',
  help: 'Evidence items from AI providers not kept, by reason: url (not http(s), or too long), malformed, over_limit (past the 10 a vote keeps)',
  labelNames: ['reason'] as const,
  registers: [registry],
});

const microsToUsd = (micros: bigint) => Number(micros) / 1e6;

export const metrics = {
  answered(route: string, method: string, status: number, seconds: number): void {
    httpRequests.inc({ route, method, status: String(status) });
    httpDuration.observe({ route, method }, seconds);
  },
  charged(operation: string, amountMicros: bigint): void {
    charges.inc({ operation });
    chargedUsd.inc({ operation }, microsToUsd(amountMicros));
  },
  refunded(operation: string, amountMicros: bigint): void {
    refunds.inc({ operation });
    refundedUsd.inc({ operation }, microsToUsd(amountMicros));
  },
  authFailed(code: string): void {
    authFailures.inc({ code });
  },
  venueCalled(venue: string, kind: 'quote' | 'candles', outcome: string): void {
    venueCalls.inc({ venue, kind, outcome });
  },
  chargeBatch(size: number): void {
    chargeBatchSize.observe(size);
  },
  workItems(queue: string, outcome: 'claimed' | 'done' | 'failed', count = 1): void {
    if (count > 0) workItems.inc({ queue, outcome }, count);
  },
  workClaimFailed(queue: string): void {
    workClaimFailures.inc({ queue });
  },
  workInFlight(queue: string, items: number): void {
    workInFlight.set({ queue }, items);
  },
  ledgerReconciled(ok: boolean): void {
    ledgerReconciles.set(ok ? 1 : 0);
    ledgerReconciledAt.setToCurrentTime();
  },
  /** One more (+1) or one fewer (-1) open stream of `route`. */
  eventStreamsOpen(route: string, change: 1 | -1): void {
    if (change > 0) eventStreamsOpen.inc({ route });
    else eventStreamsOpen.dec({ route });
  },
  evidenceDropped(reason: string, count: number): void {
    if (count > 0) evidenceDropped.inc({ reason }, count);
  },
  webhookAttempted(outcome: 'delivered' | 'retrying' | 'stopped' | 'callback_failed' | 'lease_lost'): void {
    webhookAttempts.inc({ outcome });
  },
};
