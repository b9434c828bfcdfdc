import { parseArgs } from 'node:util';
import { accountsCommand } from '../accounts/cli.js';
import { ConfigError, loadConfig } from '../config.js';
import { createContext } from '../context.js';
import type { Database } from '../db/database.js';
import { MigrationError, migrate } from '../db/migrate.js';
import { openDatabase } from '../db/open.js';
import { DataDirInUseError } from '../db/pglite.js';
import { depositsCommand } from '../deposits/index.js';
import { AppError } from '../errors.js';
import { jobsCommand } from '../jobs/cli.js';
import { keysCommand } from '../keys/cli.js';
import { ledgerCommand } from '../ledger/cli.js';
import { systemClock } from '../lib/clock.js';
import { createOutput, type Output, UsageError } from '../lib/command-line.js';
import { ListenError } from '../lib/listen.js';
import { marketsCommand } from '../markets/cli.js';
import { webhooksCommand } from '../webhooks/cli.js';
import { listenAndForward, listenSettings, StreamRefusedError } from '../webhooks/listen.js';
import { createSecretBox } from '../webhooks/secret-box.js';
import { migrateCommand } from './migrate.js';

/** Where a command reads its settings and writes its answer: the process, or a test. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * An open database to use instead of opening the configured one (and left open): the tests run
   * many commands on one embedded database, which takes seconds to open in a new process.
   */
  database?: Database;
  /** Ends a command that runs until a signal (`webhooks listen`), for tests. */
  signal?: AbortSignal;
}

const USAGE = `Usage: sibyl <command> [options]

  start                                   API and worker in one process (npm start)
  serve                                   API only
  work                                    background worker only
  migrate                                 apply database migrations
  accounts create [--mode live|sandbox] [--wallet ADDR]
  accounts list                           the newest 500 accounts
  accounts show ACCOUNT_ID
  accounts transactions ACCOUNT_ID [--limit N] [--kind K] [--starting-after ID]
  accounts credit ACCOUNT_ID USD --reference REF [--memo TEXT]
  accounts adjust ACCOUNT_ID ±USD --reason TEXT   a correction (adjustment entry; never below zero)
  accounts suspend ACCOUNT_ID | accounts activate ACCOUNT_ID
  keys create ACCOUNT_ID [--name NAME] [--permissions a,b] [--expires-at ISO]
              [--rate-limit PER_SECOND --burst N]
  keys update KEY_ID [--name NAME] [--permissions a,b] [--expires-at ISO|never]
              [--rate-limit PER_SECOND --burst N | --rate-limit default]
  keys list ACCOUNT_ID | keys revoke KEY_ID
  ledger reconcile                        check every ledger invariant
  jobs list [--status S] [--due]          scheduled jobs, newest first (--due: pending and due now)
  jobs show JOB_ID                        one job with its request, result and delivery
  markets ingest FILE.ndjson              apply platform market events (docs/markets.md)
  markets demo [--seed N]                 load the sandbox demo markets
  markets resolve MARKET_ID OUTCOME       finalize a market with the winning outcome (index or label)
  webhooks list [--account ID] [--status S]  the latest 100 webhook deliveries, newest first
  webhooks redeliver DELIVERY_ID          send a delivery again now (same webhook-id)
  webhooks cancel DELIVERY_ID             stop a pending delivery (never sent again)
  webhooks listen --forward-to URL [--api-url URL]  post the account's events to a local URL
                                          as they are sent (SIBYL_API_KEY, SIBYL_API_URL)
  webhooks reseal-secrets                 re-seal every webhook secret with SECRET_ENCRYPTION_KEY
  deposits list [--status pending|credited|unattributed|held|ignored] [--account ID] [--limit N]
  deposits assign SIGNATURE ACCOUNT_ID [USD_PER_TOKEN]  credit a transaction's unattributed or held deposits, once
  deposits rescan --before SIG | --since ISO   read a range of the chain again (nothing doubles)

  --json    print exactly one JSON object on stdout

Environment: DATABASE_URL (unset: embedded database in SIBYL_DATA_DIR, default ./data),
PORT, HOST, LOG_LEVEL and the rest in docs/operations.md.`;

/** A negative amount (`-25.00`) is a positional, not an option: carried past parseArgs under this mark. */
const NEGATIVE = '\u0000negative:';

function parse(argv: string[]) {
  const restore = (text: string) => (text.startsWith(NEGATIVE) ? `-${text.slice(NEGATIVE.length)}` : text);
  const parsed = parseOptions(argv.map((arg) => (/^-\d/.test(arg) ? `${NEGATIVE}${arg.slice(1)}` : arg)));
  const values = Object.fromEntries(
    Object.entries(parsed.values).map(([name, value]) => [
      name,
      typeof value === 'string' ? restore(value) : value,
    ]),
  ) as typeof parsed.values;
  return { values, positionals: parsed.positionals.map(restore) };
}

function parseOptions(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        mode: { type: 'string' },
        wallet: { type: 'string' },
        reference: { type: 'string' },
        memo: { type: 'string' },
        name: { type: 'string' },
        permissions: { type: 'string' },
        'expires-at': { type: 'string' },
        status: { type: 'string' },
        due: { type: 'boolean', default: false },
        seed: { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        limit: { type: 'string' },
        kind: { type: 'string' },
        'starting-after': { type: 'string' },
        account: { type: 'string' },
        reason: { type: 'string' },
        'forward-to': { type: 'string' },
        'api-url': { type: 'string' },
        before: { type: 'string' },
        since: { type: 'string' },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/**
 * Runs one `sibyl` command and answers its exit code (-1: a service that runs until a signal).
 * Errors are reported on `io` as the command line shows them, never thrown.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (err) {
    return report(err, argv.includes('--json'), io);
  }
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv);
  const out: Output = createOutput(values.json === true, io.stdout);
  const [command, action = '', ...rest] = positionals;
  if (values.help || command === 'help') {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  // A bare `sibyl` starts nothing: a server started by accident is worse than a usage message.
  if (command === undefined) throw new UsageError('missing command');

  const config = loadConfig(io.env);
  if (command === 'start' || command === 'serve' || command === 'work') {
    // Loaded only here: the service's modules (HTTP, providers, venues) are most of the start-up
    // time of a command that needs none of them.
    const { runService } = await import('../server.js');
    await runService(config, { serve: command !== 'work', work: command !== 'serve' });
    return -1; // keeps running until a signal
  }

  // A client of a running service, not of its database.
  if (command === 'webhooks' && action === 'listen') return listenCommand(values, io, config.port);

  const db = io.database ?? (await openDatabase({ ...config, dbPoolSize: 2 })).db;
  try {
    const args = { positionals: rest, options: values };
    switch (command) {
      case 'migrate':
        await migrateCommand(db, out);
        return 0;
      case 'accounts':
        await migrate(db);
        await accountsCommand(db, out, action, args, createSecretBox(config.webhooks));
        return 0;
      case 'keys':
        await migrate(db);
        await keysCommand(db, out, action, args, {
          ceilings: config.access.ceilings,
          defaultRateLimit: config.access.defaultRateLimit,
        });
        return 0;
      case 'ledger':
        await migrate(db);
        return (await ledgerCommand(db, out, action)) ? 0 : 1;
      case 'deposits':
        await migrate(db);
        await depositsCommand(db, out, action, args, config);
        return 0;
      case 'jobs':
        await migrate(db);
        await jobsCommand(db, out, action, args);
        return 0;
      case 'webhooks':
        await migrate(db);
        await webhooksCommand(db, out, action, args, createSecretBox(config.webhooks));
        return 0;
      case 'markets':
        await migrate(db);
        return (await marketsCommand(createContext(db, systemClock), out, action, args)) ? 0 : 1;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } finally {
    if (!io.database) await db.close();
  }
}

/** `sibyl webhooks listen`: runs until SIGINT/SIGTERM (or `io.signal`), then exits 0. */
async function listenCommand(
  values: Record<string, string | boolean | undefined>,
  io: CliIo,
  port: number,
): Promise<number> {
  const option = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const settings = listenSettings(option('forward-to'), option('api-url'), io.env, port);
  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort());
  const onSignal = () => stop.abort();
  if (!io.signal) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  try {
    await listenAndForward({ ...settings, signal: stop.signal, print: (line) => io.stdout(`${line}\n`) });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}

function report(err: unknown, json: boolean, io: CliIo): number {
  const known =
    err instanceof AppError ||
    err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof MigrationError ||
    err instanceof DataDirInUseError ||
    err instanceof ListenError ||
    err instanceof StreamRefusedError;
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof AppError ? err.code : err instanceof UsageError ? 'USAGE' : 'ERROR';
  if (json) {
    io.stdout(
      `${JSON.stringify({ error: message, code, ...(err instanceof AppError && err.details ? { details: err.details } : {}) })}\n`,
    );
  } else {
    io.stderr(`sibyl: ${message}\n`);
    if (err instanceof UsageError) io.stderr(`\n${USAGE}\n`);
    if (!known && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
  }
  return err instanceof UsageError ? 2 : 1;
}
