import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import { AiReadiness, type SlotStatus } from '../ai/index.js';
import type { Database } from '../db/database.js';

const Health = Type.Object({ status: Type.String() });
const DepositWatcher = Type.Object(
  {
    watcher: Type.Union([Type.Literal('off'), Type.Literal('on')], {
      description:
        'off: SOLANA_RPC_URL and DEPOSIT_ADDRESS are not set, deposits are credited by the operator',
    }),
    lastPollAt: Type.Union([Type.String(), Type.Null()]),
    lastSuccessAt: Type.Union([Type.String(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    lagSlots: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Finalized slots not yet processed, as of the last poll',
    }),
  },
  { description: 'The deposit watcher (informational: it never makes the service unready)' },
);
const Readiness = Type.Object({
  status: Type.String(),
  ai: AiReadiness,
  deposits: Type.Optional(DepositWatcher),
});

/** Liveness and readiness for load balancers and orchestrators: unauthenticated and free. */
export function healthRoutes(
  app: FastifyInstance,
  deps: {
    db: Database;
    aiModels: readonly SlotStatus[];
    /** The deposit watcher's state, read from the database. */
    deposits?: () => Promise<Static<typeof DepositWatcher>>;
  },
): void {
  // Which AI providers are configured, for operators; readiness itself is the database's.
  const ai = {
    live: deps.aiModels.every((m) => m.configured) ? ('available' as const) : ('unavailable' as const),
    models: deps.aiModels.map((m) => ({ ...m })),
  };

  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'healthz',
        summary: 'Liveness: the process answers',
        tags: ['health'],
        security: [],
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: the database answers; also which AI model slots are configured',
        tags: ['health'],
        security: [],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (request, reply) => {
      try {
        await deps.db.query('SELECT 1');
        return { status: 'ready', ai, ...(deps.deposits ? { deposits: await deps.deposits() } : {}) };
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        return reply.code(503).header('retry-after', '5').send({ status: 'unavailable', ai });
      }
    },
  );
}
