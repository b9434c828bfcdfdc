import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** The Prometheus listener (docs/operations.md#metrics). */
export const metricsSettings = defineSettings(
  {
    METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    METRICS_HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  },
  (v) => ({
    /** Where `GET /metrics` listens; absent: no listener (the default). */
    port: v.METRICS_PORT,
    /** Loopback unless configured: the figures are for the operator's scraper, not the world. */
    host: v.METRICS_HOST,
  }),
);

export type MetricsSettings = ReturnType<typeof metricsSettings.parse>;
