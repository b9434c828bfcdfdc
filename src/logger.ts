import pino, { type DestinationStream, type Logger } from 'pino';
import type { CoreConfig } from './core-settings.js';

/** One pino logger for the process; request lines carry the request id, never a secret. */
export function createLogger(
  config: Pick<CoreConfig, 'logLevel'>,
  destination: 1 | 2 | DestinationStream = 1,
): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: 'sibyl' },
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', '*.key', 'key'],
        censor: '[redacted]',
      },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}

/**
 * What domain code and workers log through: structured fields first, then the message. A pino
 * logger is one; tests hand in a recorder.
 */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A Log that writes nothing. */
export const silentLog: Log = { info() {}, warn() {}, error() {} };
