import type { Database } from '../db/database.js';
import { ledgerKeyId, quotaOf } from '../http/billing/request.js';
import type { StreamMeter } from '../http/event-stream/stream.js';
import type { Principal } from '../keys/index.js';
import { type Biller, balanceOf, ChargeRefusedError } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import { formatUsd } from '../lib/money.js';
import { metrics } from '../metrics/metrics.js';

export interface MeterDeps {
  db: Database;
  clock: Clock;
  /** The edge's biller: a minute is charged like any request billed after its answer (coalesced). */
  biller: Biller;
}

/**
 * A stream's minutes on the ledger (docs/streams.md#billing): each started minute is one charge of
 * `minuteMicros` under the stream's operation and request id, against the key's quotas like any
 * charge. A refusal (402 INSUFFICIENT_BALANCE, 429 QUOTA_EXCEEDED) is the HTTP answer at connect
 * and the stream's last event later; nothing is ever refunded (a minute is paid when it starts).
 */
export function minuteMeter(
  deps: MeterDeps,
  stream: { principal: Principal; requestId: string; operation: string },
  minuteMicros: bigint,
): StreamMeter {
  const { principal, requestId, operation } = stream;
  return {
    minuteUsd: formatUsd(minuteMicros),
    async payMinute() {
      const quota = quotaOf(principal, deps.clock);
      const outcome = await deps.biller.charge({
        accountId: principal.accountId,
        amountMicros: minuteMicros,
        operation,
        requestId,
        keyId: ledgerKeyId(principal),
        quota,
      });
      if (!outcome.ok) {
        if (outcome.reason === 'IDEMPOTENCY_KEY_TAKEN') throw new Error('a minute without a key lost one');
        const balance =
          outcome.reason === 'INSUFFICIENT_BALANCE'
            ? await balanceOf(deps.db, principal.accountId)
            : undefined;
        throw new ChargeRefusedError(outcome, minuteMicros, quota, balance);
      }
      metrics.charged(operation, minuteMicros);
    },
  };
}
