import { Counter, Gauge } from 'prom-client';
import { registry } from '../metrics/metrics.js';

/** The deposit watcher's metrics (docs/deposits.md#operations), on the process's registry. */

const lagSlots = new Gauge({
  name: 'sibyl_deposits_lag_slots',
  help: 'Finalized slot of the cluster minus the newest slot the watcher has processed',
  registers: [registry],
});

const byStatus = new Gauge({
  name: 'sibyl_deposits',
  help: 'Deposits by status (pending, unattributed, held, ignored, credited), and transactions the watcher could not book (unreadable), as of the last poll',
  labelNames: ['status'] as const,
  registers: [registry],
});

const creditedUsd = new Gauge({
  name: 'sibyl_deposits_credited_usd',
  help: 'USD credited from the chain in all, as of the last poll',
  registers: [registry],
});

const credits = new Counter({
  name: 'sibyl_deposits_credited_total',
  help: 'Deposits credited by this process (committed)',
  labelNames: ['asset'] as const,
  registers: [registry],
});

const rpcErrors = new Counter({
  name: 'sibyl_deposits_rpc_errors_total',
  help: 'Failed Solana RPC attempts, by kind (rate_limited, http_error, rpc_error, timeout, network, bad_response)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

const polls = new Counter({
  name: 'sibyl_deposits_polls_total',
  help: 'Watcher polls by outcome (ok, failed)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const depositMetrics = {
  lag(slots: number): void {
    lagSlots.set(slots);
  },
  statuses(rows: { status: string; n: bigint | number; usd_micros: bigint | number }[]): void {
    for (const status of ['pending', 'credited', 'unattributed', 'held', 'ignored', 'unreadable']) {
      const row = rows.find((r) => r.status === status);
      byStatus.set({ status }, Number(row?.n ?? 0));
      if (status === 'credited') creditedUsd.set(Number(row?.usd_micros ?? 0) / 1e6);
    }
  },
  credited(asset: string, n = 1): void {
    credits.inc({ asset }, n);
  },
  rpcError(kind: string): void {
    rpcErrors.inc({ kind });
  },
  polled(ok: boolean): void {
    polls.inc({ outcome: ok ? 'ok' : 'failed' });
  },
};
