import type { MeterMinutes } from '../../http/event-stream/stream.js';
import { formatUsd } from '../../lib/money.js';
import { metrics } from '../../metrics/metrics.js';
import type { Services } from '../services.js';
import { ledgerKeyId, quotaOf, refusal } from './request.js';

/**
 * The gate's metering verb (docs/streams.md#billing): a stream's minutes on the ledger, each started
 * minute one charge of `minuteMicros` under the stream's operation and request id, through the edge's
 * biller (coalesced, as a request billed after its answer) and against the key's quotas like any
 * charge. A refusal (402 INSUFFICIENT_BALANCE, 429 QUOTA_EXCEEDED) is the one a billed request gets:
 * the HTTP answer at connect, the stream's last event later. Nothing is ever refunded (a minute is
 * paid when it starts).
 */
export function minuteMeters(services: Pick<Services, 'db' | 'clock' | 'biller' | 'balances'>): MeterMinutes {
  return ({ principal, requestId, operation }, minuteMicros) => ({
    minuteUsd: formatUsd(minuteMicros),
    async payMinute() {
      const quota = quotaOf(principal, services.clock);
      const outcome = await services.biller.charge({
        accountId: principal.accountId,
        amountMicros: minuteMicros,
        operation,
        requestId,
        keyId: ledgerKeyId(principal),
        quota,
      });
      if (!outcome.ok) {
        if (outcome.reason === 'IDEMPOTENCY_KEY_TAKEN') throw new Error('a minute without a key lost one');
        throw await refusal(services, principal, outcome, minuteMicros);
      }
      metrics.charged(operation, minuteMicros);
    },
  });
}
