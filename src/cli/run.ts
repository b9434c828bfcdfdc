import { parseArgs } from 'node:util';
import { type Config, ConfigError, loadConfig } from '../config.js';
import { DataDirInUseError } from '../db/data-dir.js';
import type { Database } from '../db/database.js';
import { MigrationError, migrate } from '../db/migrate.js';
import { openDatabase } from '../db/open.js';
import { AppError } from '../errors.js';
import type { Command, CommandIo } from '../feature.js';
import { FEATURES } from '../features.js';
import { CommandRefusal, createOutput, type Output, UsageError } from '../lib/command-line.js';
import { ListenError } from '../lib/listen.js';
import type { CliIo } from './io.js';
import { migrateCommand } from './migrate.js';
import { forwardCommand, OperatorChannelError } from './operator-channel/client.js';

export type { CliIo };

/** Every feature's commands, by name (src/features.ts). */
const COMMANDS: ReadonlyMap<string, Command<Config>> = new Map<string, Command<Config>>(
  FEATURES.flatMap((feature) => Object.entries(feature.commands ?? {})),
);

const USAGE_HEAD = `Usage: sibyl <command> [options]

  start                                   API and worker in one process (npm start)
  serve                                   API only
  work                                    background worker only
  migrate                                 apply database migrations`;

const USAGE_TAIL = `
  --json    print exactly one JSON object on stdout

Environment: DATABASE_URL (unset: embedded database in SIBYL_DATA_DIR, default ./data),
PORT, HOST, LOG_LEVEL and the rest in docs/operations.md.`;

/** The usage text: the process's own commands, then each feature's lines in the list's order. */
const USAGE = [USAGE_HEAD, ...[...COMMANDS.values()].flatMap((command) => command.usage), USAGE_TAIL].join(
  '\n',
);

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
        unreadable: { type: 'boolean', default: false },
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
        events: { type: 'string' },
        before: { type: 'string' },
        since: { type: 'string' },
        models: { type: 'string' },
        concurrency: { type: 'string' },
        target: { type: 'string' },
        out: { type: 'string' },
        cache: { type: 'string' },
        prices: { type: 'string' },
        publish: { type: 'boolean', default: false },
        search: { type: 'string' },
        compromised: { type: 'boolean', default: false },
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
  const [command, action = '', ...rest] = positionals;
  if (values.help || command === 'help') {
    io.stdout(`${USAGE}\n`);
    return 0;
  }
  // A bare `sibyl` starts nothing: a server started by accident is worse than a usage message.
  if (command === undefined) throw new UsageError('missing command');

  const config = loadConfig(io.env);
  if (command === 'start' || command === 'serve' || command === 'work') {
    // A service's own database is its own: not one handed in (a test, the operator channel).
    if (io.database) throw new UsageError(`"${command}" starts a service; run it on its own`);
    // Loaded only here: the service's modules (HTTP, providers, venues) are most of the start-up
    // time of a command that needs none of them.
    const { runService } = await import('../server.js');
    const { serveOperatorChannel } = await import('./operator-channel/server.js');
    await runService(
      config,
      { serve: command !== 'work', work: command !== 'serve' },
      {
        // On the embedded database, operator commands run in this process (docs/operations.md).
        operatorChannel: (db, log) =>
          serveOperatorChannel({ dataDir: config.dataDir, db, env: io.env, log, run: runCli }),
      },
    );
    return -1; // keeps running until a signal
  }
  if (command !== 'migrate' && !COMMANDS.has(command)) throw new UsageError(`unknown command "${command}"`);

  // Nothing printed yet when the embedded database turns out to be held: the command can still
  // run whole in the process that holds it.
  let printed = false;
  const watched: CliIo = {
    ...io,
    stdout: (text) => {
      printed = true;
      io.stdout(text);
    },
    stderr: (text) => {
      printed = true;
      io.stderr(text);
    },
  };
  try {
    return await runOnDatabase(command, action, rest, values, config, watched);
  } catch (err) {
    if (!(err instanceof DataDirInUseError) || printed || io.database) throw err;
    const code = await forwardCommand(err.dataDir, argv, io);
    if (code === null) throw err;
    return code;
  }
}

/** `migrate` or a feature's command, on the configured database (opened when the command asks). */
async function runOnDatabase(
  command: string,
  action: string,
  rest: string[],
  values: ReturnType<typeof parse>['values'],
  config: Config,
  io: CliIo,
): Promise<number> {
  const out: Output = createOutput(values.json === true, io.stdout);
  if (command === 'migrate') {
    const db = io.database ?? (await openDatabase({ ...config, dbPoolSize: 2 }));
    try {
      await migrateCommand(db, out);
      return 0;
    } finally {
      if (!io.database) await db.close();
    }
  }
  const featureCommand = COMMANDS.get(command) as Command;

  // Opened (and migrated) only when the command asks: `webhooks listen` is a client of a running
  // service, not of its database.
  let opened: Promise<Database> | undefined;
  const held: { db?: Database } = {};
  const commandIo: CommandIo<Config> = {
    config,
    out,
    env: io.env,
    cwd: io.cwd ?? process.cwd(),
    print: (line) => io.stdout(`${line}\n`),
    terminal: io.terminal === true,
    ...(io.signal ? { signal: io.signal } : {}),
    database() {
      opened ??= (async () => {
        const db = io.database ?? (await openDatabase({ ...config, dbPoolSize: 2 }));
        held.db = db;
        await migrate(db);
        return db;
      })();
      return opened;
    },
  };
  try {
    return (await featureCommand.run(commandIo, action, { positionals: rest, options: values })) ? 0 : 1;
  } finally {
    if (held.db && !io.database) await held.db.close();
  }
}

function report(err: unknown, json: boolean, io: CliIo): number {
  const known =
    err instanceof AppError ||
    err instanceof UsageError ||
    err instanceof ConfigError ||
    err instanceof MigrationError ||
    err instanceof ListenError ||
    err instanceof CommandRefusal ||
    err instanceof OperatorChannelError;
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
