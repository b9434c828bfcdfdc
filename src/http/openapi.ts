import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { CoreConfig } from '../core-settings.js';
import { registerGuides } from './guides.js';
import { type DocumentOptions, finishDocument } from './openapi-document.js';
import { API_PREFIX } from './route.js';

const guide = (name: string, label: string) => `[${label}](/docs/guides/${name}.md)`;

/** Where clients reach this service: PUBLIC_BASE_URL, else the listening address. */
export function baseUrl(config: Pick<CoreConfig, 'host' | 'port' | 'publicBaseUrl'>): string {
  if (config.publicBaseUrl) return config.publicBaseUrl.replace(/\/+$/, '');
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

const DESCRIPTION = `Prepaid, metered API for Solana prediction-market builders.

Every API route needs \`Authorization: Bearer <key>\` (keys start with \`pk_live_\` or \`pk_test_\`).
Billable successes carry \`costUsd\` and \`remainingBalanceUsd\`; errors are never charged.
Errors share one body: \`{ error, code, requestId, details? }\`.

Guides: ${guide('api', 'API conventions, errors, idempotency')} · ${guide('prices', 'prices')} ·
${guide('markets', 'markets')} · ${guide('ai', 'AI resolution')} · ${guide('jobs', 'scheduled jobs')} ·
${guide('webhooks', 'webhooks')} · ${guide('streams', 'streams')} · ${guide('dashboard', 'dashboard')} · ${guide('operations', 'operations')}.`;

/** The OpenAPI 3.1 document, generated from the route schemas, and a local reference page. */
export async function registerOpenApi(
  app: FastifyInstance,
  version: string,
  config: Pick<CoreConfig, 'host' | 'port' | 'publicBaseUrl'> & {
    access: { ceilings: { maxPerSecond: number; maxBurst: number } };
  },
  webhooks?: DocumentOptions['webhooks'],
): Promise<void> {
  await app.register(swagger, {
    transformObject: (document) =>
      finishDocument(
        ('openapiObject' in document ? document.openapiObject : document.swaggerObject) as Record<
          string,
          unknown
        >,
        {
          serverUrl: baseUrl(config),
          settings: {
            RATE_LIMIT_MAX_PER_SECOND: config.access.ceilings.maxPerSecond,
            RATE_LIMIT_MAX_BURST: config.access.ceilings.maxBurst,
          },
          webhooks,
        },
      ) as never,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sibyl API',
        version,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: pk_live_… (live) or pk_test_… (sandbox)',
          },
          cookieAuth: {
            type: 'apiKey',
            in: 'cookie',
            name: 'sibyl_session',
            description:
              'A dashboard session, started by signing in with a Solana wallet (docs/dashboard.md)',
          },
        },
      },
      tags: [
        { name: 'account', description: 'The calling account' },
        { name: 'keys', description: 'API key management' },
        { name: 'prices', description: `Volume-weighted token prices (${guide('prices', 'guide')})` },
        {
          name: 'historical',
          description: `Historical price series from venue candles (${guide('prices', 'guide')})`,
        },
        { name: 'markets', description: `Prediction-market data (${guide('markets', 'guide')})` },
        {
          name: 'ai',
          description: `AI resolution by four models and a published consensus (${guide('ai', 'guide')})`,
        },
        {
          name: 'jobs',
          description: `Scheduled price checks and AI resolutions (${guide('jobs', 'guide')})`,
        },
        {
          name: 'webhooks',
          description: `Callback deliveries: test, inspect, redeliver, rotate the secret (${guide('webhooks', 'guide')})`,
        },
        {
          name: 'streams',
          description: `Live prices as server-sent events, billed per minute (${guide('streams', 'guide')})`,
        },
        {
          name: 'attestations',
          description: `The keys that sign answers a Solana program can verify (${guide('attestations', 'guide')})`,
        },
        { name: 'health', description: 'Liveness and readiness' },
        {
          name: 'dashboard',
          description: `The dashboard's own endpoints under /dashboard/api: Sign-In With Solana and a session cookie, never an API key (${guide('dashboard', 'guide')})`,
        },
      ],
    },
  });

  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());

  registerGuides(app);

  // Swagger UI ships its assets inside the package: the page works offline, no CDN.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    theme: { title: 'Sibyl API reference' },
  });
}
