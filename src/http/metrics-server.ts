import Fastify, { type FastifyInstance } from 'fastify';
import type { MetricsSettings } from '../metrics/config.js';
import { registry } from '../metrics/metrics.js';

/**
 * `GET /metrics` in the Prometheus text format, on its own listener: not behind the API's keys,
 * rate limits or public address, so a scraper on the operator's network reads it and nobody else.
 * Returns null when METRICS_PORT is not set.
 */
export async function startMetricsServer(settings: MetricsSettings): Promise<FastifyInstance | null> {
  if (settings.port === undefined) return null;
  const server = Fastify({ logger: false });
  server.get('/metrics', async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  await server.listen({ port: settings.port, host: settings.host });
  return server;
}
