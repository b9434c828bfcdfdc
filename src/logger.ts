import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from './config.js';

/** One pino logger for the process; request lines carry the request id, never a secret. */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
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
