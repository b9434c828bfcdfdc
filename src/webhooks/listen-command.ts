import type { CoreConfig } from '../core-settings.js';
import type { CommandIo } from '../feature.js';
import { type CommandArgs, option } from '../lib/command-line.js';
import { EVENT_TYPES } from './event-types.js';
import { listenAndForward, listenEvents, listenSettings } from './listen.js';

/** `sibyl webhooks listen`: runs until SIGINT/SIGTERM (or `io.signal`), then succeeds. */
export async function listenCommand(
  io: CommandIo<Pick<CoreConfig, 'port'>>,
  args: CommandArgs,
): Promise<boolean> {
  const settings = listenSettings(
    option(args, 'forward-to'),
    option(args, 'api-url'),
    io.env,
    io.config.port,
  );
  const events = listenEvents(option(args, 'events'), EVENT_TYPES);
  const stop = new AbortController();
  io.signal?.addEventListener('abort', () => stop.abort());
  const onSignal = () => stop.abort();
  if (!io.signal) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  try {
    await listenAndForward({ ...settings, events, signal: stop.signal, print: io.print });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return true;
}
