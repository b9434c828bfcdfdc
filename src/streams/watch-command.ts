import type { CoreConfig } from '../core-settings.js';
import type { CommandIo } from '../feature.js';
import { type CommandArgs, option, UsageError } from '../lib/command-line.js';
import { watchPrices } from './watch.js';

/** `sibyl stream prices SYMBOL…`: runs until SIGINT/SIGTERM (or `io.signal`), then succeeds. */
export async function streamCommand(
  io: CommandIo<Pick<CoreConfig, 'port'>>,
  action: string,
  args: CommandArgs,
): Promise<boolean> {
  if (action !== 'prices') throw new UsageError('usage: sibyl stream prices SYMBOL… [--api-url URL]');
  const symbols = args.positionals.flatMap((s) => s.split(',')).filter((s) => s !== '');
  if (symbols.length === 0)
    throw new UsageError('name at least one symbol or mint: sibyl stream prices SOL JUP');
  const apiKey = io.env.SIBYL_API_KEY;
  if (!apiKey) throw new UsageError('set SIBYL_API_KEY to a key with the `price` permission');
  const apiUrl = option(args, 'api-url') ?? io.env.SIBYL_API_URL ?? `http://127.0.0.1:${io.config.port}`;
  try {
    new URL(apiUrl);
  } catch {
    throw new UsageError(`--api-url "${apiUrl}" is not a URL`);
  }
  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort());
  const onSignal = () => stop.abort();
  if (!io.signal) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  try {
    await watchPrices({
      apiUrl,
      apiKey,
      symbols,
      signal: stop.signal,
      terminal: io.terminal === true,
      print: io.print,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return true;
}
