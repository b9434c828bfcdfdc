import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_PREFIX } from './route.js';

const DESCRIPTION = `Prepaid, metered API for Solana prediction-market builders.

Every API route needs \`Authorization: Bearer <key>\` (keys start with \`pk_live_\` or \`pk_test_\`).
Billable successes carry \`costUsd\` and \`remainingBalanceUsd\`; errors are never charged.
Errors share one body: \`{ error, code, details?, requestId }\`.`;

/** The OpenAPI 3.1 document, generated from the route schemas, and a local reference page. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Sibyl API', version, description: DESCRIPTION },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: pk_live_… (live) or pk_test_… (sandbox)',
          },
        },
      },
      tags: [
        { name: 'account', description: 'The calling account' },
        { name: 'keys', description: 'API key management' },
        { name: 'prices', description: 'Volume-weighted token prices (docs/prices.md)' },
        { name: 'historical', description: 'Historical price series from venue candles (docs/prices.md)' },
        { name: 'markets', description: 'Prediction-market data (docs/markets.md)' },
        { name: 'ai', description: 'AI resolution by four models and a published consensus (docs/ai.md)' },
        { name: 'jobs', description: 'Scheduled price checks and AI resolutions (docs/jobs.md)' },
        {
          name: 'webhooks',
          description: 'Callback deliveries: test, inspect, redeliver, rotate the secret (docs/webhooks.md)',
        },
        { name: 'health', description: 'Liveness and readiness' },
      ],
    },
  });

  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());

  // Swagger UI ships its assets inside the package: the page works offline, no CDN.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
  });
}
