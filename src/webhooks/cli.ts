import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import { systemClock } from '../lib/clock.js';
import { type CommandArgs, type Output, option, UsageError } from '../lib/command-line.js';
import { cancelDelivery, listDeliveries, redeliver } from './deliveries.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './outbox.js';
import { resealSecrets } from './reseal.js';
import type { SecretBox } from './secret-box.js';

/** `sibyl webhooks list [--account ID] [--status S]`, `redeliver ID`, `cancel ID` and `reseal-secrets`. */
export async function webhooksCommand(
  db: Database,
  out: Output,
  action: string,
  args: CommandArgs,
  secrets: SecretBox,
): Promise<void> {
  const ctx = createContext(db, systemClock);
  switch (action) {
    case 'list': {
      const status = option(args, 'status');
      if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
        throw new UsageError(`--status takes one of ${DELIVERY_STATUSES.join(', ')}`);
      }
      const account = option(args, 'account') ?? null;
      const { deliveries, total } = await listDeliveries(ctx, account, {
        status: status as DeliveryStatus | undefined,
        page: 1,
        pageSize: 100,
      });
      out.result(
        { deliveries, total },
        deliveries.length === 0
          ? 'No deliveries'
          : deliveries
              .map(
                (d) =>
                  `${d.id}  ${d.status.padEnd(15)} ${String(d.attemptCount).padStart(2)}  ${d.type.padEnd(5)} ${d.url}`,
              )
              .join('\n'),
      );
      return;
    }
    case 'redeliver': {
      const id = args.positionals[0];
      if (!id) throw new UsageError('missing DELIVERY_ID');
      const delivery = await redeliver(ctx, null, id);
      out.result(delivery, `Delivery ${delivery.id} is due again now (attempt ${delivery.attemptCount + 1})`);
      return;
    }
    case 'cancel': {
      const id = args.positionals[0];
      if (!id) throw new UsageError('missing DELIVERY_ID');
      const delivery = await cancelDelivery(ctx, null, id);
      out.result(
        delivery,
        delivery.status === 'CANCELLED'
          ? `Delivery ${delivery.id} is cancelled: it will not be sent again`
          : `Delivery ${delivery.id} has an attempt in flight: it is cancelled when that attempt ends (unless it delivers)`,
      );
      return;
    }
    case 'reseal-secrets': {
      if (!secrets.encrypts)
        throw new UsageError('SECRET_ENCRYPTION_KEY is not set: there is no key to seal with');
      const result = await resealSecrets(db, secrets);
      out.result(
        result,
        `Re-sealed the webhook secrets of ${result.resealed} of ${result.accounts} accounts`,
      );
      return;
    }
    default:
      throw new UsageError(`unknown webhooks action "${action}"`);
  }
}
