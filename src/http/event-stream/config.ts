import Type from 'typebox';
import { ConfigError, defineSettings } from '../../lib/settings.js';

/**
 * A setting that also answers to the name it had when only the webhook stream existed: the new name
 * wins; both set to different values is refused rather than guessed.
 */
function renamed(name: string, value: number | undefined, old: string, oldValue: number | undefined) {
  if (value !== undefined && oldValue !== undefined && value !== oldValue)
    throw new ConfigError(
      `Invalid configuration: ${name} and ${old} (its old name) disagree; set only ${name}`,
    );
  return value ?? oldValue;
}

/** Every event stream's (docs/operations.md#event-streams): the limits they count against together, the keep-alive. */
export const streamSettings = defineSettings(
  {
    STREAMS_PER_KEY: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    WEBHOOK_STREAMS_PER_KEY: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    STREAMS_PER_ACCOUNT: Type.Integer({ default: 10, minimum: 1, maximum: 1000 }),
    STREAMS_PER_ADDRESS: Type.Integer({ default: 20, minimum: 1, maximum: 100_000 }),
    STREAMS_PER_PROCESS: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    WEBHOOK_STREAMS_MAX: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    STREAM_HEARTBEAT_MS: Type.Optional(Type.Integer({ minimum: 1000, maximum: 300_000 })),
    WEBHOOK_STREAM_HEARTBEAT_MS: Type.Optional(Type.Integer({ minimum: 1000, maximum: 300_000 })),
  },
  (v) => ({
    /** Open streams, webhook, price and market together: per key, account and address across instances; per process. */
    limits: {
      perKey:
        renamed('STREAMS_PER_KEY', v.STREAMS_PER_KEY, 'WEBHOOK_STREAMS_PER_KEY', v.WEBHOOK_STREAMS_PER_KEY) ??
        3,
      perAccount: v.STREAMS_PER_ACCOUNT,
      perAddress: v.STREAMS_PER_ADDRESS,
      perProcess:
        renamed('STREAMS_PER_PROCESS', v.STREAMS_PER_PROCESS, 'WEBHOOK_STREAMS_MAX', v.WEBHOOK_STREAMS_MAX) ??
        1000,
    },
    /** A comment line once a stream has been silent this long, so proxies and clients see it alive. */
    heartbeatMs:
      renamed(
        'STREAM_HEARTBEAT_MS',
        v.STREAM_HEARTBEAT_MS,
        'WEBHOOK_STREAM_HEARTBEAT_MS',
        v.WEBHOOK_STREAM_HEARTBEAT_MS,
      ) ?? 15_000,
  }),
);

export type StreamSettings = ReturnType<typeof streamSettings.parse>;
