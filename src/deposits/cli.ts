import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import { HistoricalService } from '../historical/index.js';
import { systemClock } from '../lib/clock.js';
import { type CommandArgs, type Output, option, UsageError } from '../lib/command-line.js';
import { parseIsoTimestamp } from '../lib/time.js';
import { silentLog } from '../logger.js';
import { createLiveVenues, createPriceService, type PriceConfig } from '../prices/index.js';
import { assignDeposits } from './assign.js';
import type { DepositConfig } from './config.js';
import {
  DEPOSIT_STATUSES,
  type DepositStatus,
  listDeposits,
  presentDeposit,
  rescanRange,
} from './operator.js';
import type { DepositPrices } from './prices.js';
import type { SolanaRpc } from './rpc.js';
import { treasuryOf } from './treasury.js';
import { listUnreadable } from './unreadable.js';
import { rpcFromConfig, watcherFromConfig } from './wiring.js';

/** What a rescan reads the chain and prices with; default: the configuration's (tests hand in fakes). */
export interface RescanPorts {
  rpc?: SolanaRpc;
  prices?: DepositPrices;
}

/**
 * `sibyl deposits list [--status S] [--account ID] [--limit N]`, `list --unreadable [--limit N]`,
 * `assign SIGNATURE ACCOUNT_ID [USD_PER_TOKEN]`, `rescan --before SIG | --since ISO`
 * (docs/deposits.md#operations).
 */
export async function depositsCommand(
  db: Database,
  out: Output,
  action: string,
  args: CommandArgs,
  config: { deposits: DepositConfig; prices: PriceConfig },
  ports: RescanPorts = {},
): Promise<void> {
  switch (action) {
    case 'list': {
      const limit = limitOf(args);
      if (args.options.unreadable === true) {
        if (option(args, 'status') !== undefined || option(args, 'account') !== undefined) {
          throw new UsageError(
            '--unreadable lists transactions, not deposits: it takes no --status or --account',
          );
        }
        const transactions = await listUnreadable(db, limit);
        out.result(
          { transactions, total: transactions.length },
          transactions.length === 0
            ? 'No unreadable transactions'
            : transactions
                .map((t) => `${t.signature}  slot ${t.slot}  seen ${t.seenAt}  ${t.reason}`)
                .join('\n'),
        );
        return;
      }
      const status = option(args, 'status');
      if (status !== undefined && !DEPOSIT_STATUSES.includes(status as DepositStatus)) {
        throw new UsageError(`--status must be one of: ${DEPOSIT_STATUSES.join(', ')}`);
      }
      const rows = await listDeposits(db, {
        ...(status !== undefined ? { status: status as DepositStatus } : {}),
        ...(option(args, 'account') !== undefined ? { accountId: option(args, 'account') as string } : {}),
        limit,
      });
      const deposits = rows.map(presentDeposit);
      out.result(
        { deposits, total: deposits.length },
        deposits.length === 0
          ? 'No deposits'
          : deposits
              .map(
                (d) =>
                  `${d.reference}  ${d.status.padEnd(12)} ${d.amount} ${d.asset}  ${d.usdValue ?? '-'} USD  ` +
                  `rate ${d.rateUsd ?? '-'}  slot ${d.slot}  ${d.accountId ?? '(no account)'}${d.reason ? `  ${d.reason}` : ''}`,
              )
              .join('\n'),
      );
      return;
    }
    case 'assign': {
      const [signature, accountId, rate, extra] = args.positionals;
      if (!signature || !accountId || extra !== undefined) {
        throw new UsageError('deposits assign SIGNATURE ACCOUNT_ID [USD_PER_TOKEN]');
      }
      const credited = await assignDeposits(createContext(db, systemClock), {
        signature,
        accountId,
        ...(rate !== undefined ? { rate } : {}),
      });
      out.result(
        { credited },
        credited
          .map(
            (d) =>
              `Credited ${d.reference} (${d.previousStatus}): ${d.usdValue} USD to ${accountId} at ${d.rateUsd} USD per ${d.asset} (entry ${d.entryId})`,
          )
          .join('\n'),
      );
      return;
    }
    case 'rescan': {
      const before = option(args, 'before');
      const sinceText = option(args, 'since');
      if ((before === undefined) === (sinceText === undefined)) {
        throw new UsageError('deposits rescan takes --before SIGNATURE or --since ISO_TIME');
      }
      const since = sinceText === undefined ? undefined : parseIsoTimestamp(sinceText);
      if (since === null) throw new UsageError(`--since "${sinceText}" is not an ISO 8601 time with a zone`);
      const deps = config.deposits;
      if (deps.watch === null) {
        throw new UsageError('the deposit watcher is off: set SOLANA_RPC_URL and DEPOSIT_ADDRESS');
      }
      const rpc = ports.rpc ?? (rpcFromConfig(deps) as SolanaRpc);
      const venues = createLiveVenues(config.prices, systemClock);
      const watcher = await watcherFromConfig({
        db,
        clock: systemClock,
        log: silentLog,
        config: deps,
        rpc,
        ...(ports.prices
          ? { prices: ports.prices }
          : {
              priceService: createPriceService(config.prices, systemClock, venues.price),
              historical: new HistoricalService(db, venues.candles, systemClock, config.prices),
            }),
      });
      const treasury = await treasuryOf(deps.watch.depositAddress, deps.usdcMint);
      const signatures = await rescanRange(rpc, treasury, {
        ...(before !== undefined ? { before } : {}),
        ...(since ? { since } : {}),
      });
      const report = await watcher?.process(signatures);
      out.result(
        { transactions: signatures.length, written: report?.written, unreadable: report?.unreadable },
        `Rescanned ${signatures.length} transactions; newly written: ${JSON.stringify(report?.written)}` +
          (report?.unreadable ? `; ${report.unreadable} unreadable (sibyl deposits list --unreadable)` : ''),
      );
      return;
    }
    default:
      throw new UsageError(`unknown deposits action "${action}"`);
  }
}

function limitOf(args: CommandArgs): number {
  const limit = Number(option(args, 'limit') ?? '100');
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
    throw new UsageError('--limit must be an integer from 1 to 10000');
  }
  return limit;
}
