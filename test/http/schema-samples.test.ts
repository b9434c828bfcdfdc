import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/attestations/keys.js';
import { buildReport } from '../../src/evaluation/report.js';
import { publishScorecard } from '../../src/evaluation/scorecard.js';
import { scorecardSummary } from '../../src/evaluation/summary.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { openApiAjv } from '../helpers/openapi-ajv.js';
import { type SampleContext, sample, seeded } from './schema-samples.js';

/**
 * The OpenAPI document states every rule the service enforces, so a client can check a request before sending it:
 * for generated requests its own schema accepts — control characters, unusual Unicode and boundary
 * lengths included (schema-samples.ts) — no operation refuses with a 4xx, nor answers 5xx. The only
 * refusals allowed are those of state no schema can describe (DOMAIN_REFUSALS).
 */

type Json = Record<string, unknown>;
interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Json;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: { 'application/json': { schema: Json } } };
}

const SAMPLES_PER_OPERATION = 5;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SEED = 28_011;

let ctx: TestContext;
let account: TestAccount;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };

beforeAll(async () => {
  // Attestations on whatever the database: on PostgreSQL without a key, `attest=true` is the
  // deployment's 503 ATTESTATION_UNAVAILABLE, not a refusal of the request.
  ctx = await createTestContext({ config: { ATTESTATION_SECRET_KEY: generateSecret() } });
  account = await ctx.createAccount({ balanceUsd: '1000.00' });
  // GET /ai/scorecard answers 404 until a scorecard is published: publish one (of no questions).
  await publishScorecard(
    ctx.database.db,
    scorecardSummary(
      buildReport([], {
        set: { format: 'jsonl', questions: [], skipped: {} },
        mode: 'sandbox',
        modelsUsed: ['sandbox/alpha', 'sandbox/beta', 'sandbox/gamma', 'sandbox/delta'],
        confidenceThreshold: 0.75,
        target: 0.97,
        interrupted: false,
        startedAt: new Date(),
        finishedAt: new Date(),
        cachedAnswers: 0,
        askedAnswers: 0,
      }),
    ),
  );
  doc = (await ctx.request(null, { method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => {
  await expectLedgerReconciles(ctx.database.db);
  await ctx.close();
});

function validatorOf(ajv: ReturnType<typeof openApiAjv>, schema: Json) {
  return ajv.compile({ ...schema, components: doc.components });
}

/**
 * Refusals that depend on what the service holds, not on the request's shape: what a generated id
 * names (nothing), whether a generated symbol is listed, what state a job, delivery or key is in, how
 * many keys the account has. Every other 4xx of a schema-valid request is a rule the schema does not
 * state.
 */
const DOMAIN_REFUSALS = new Set([
  'NOT_FOUND',
  'JOB_NOT_FOUND',
  'SYMBOL_NOT_FOUND',
  'MAX_KEYS_EXCEEDED',
  'JOB_CANNOT_CANCEL',
  'DELIVERY_CANNOT_CANCEL',
  'KEY_ROTATION_IN_PROGRESS',
]);

/**
 * The refusals of a schema-valid request whose rule JSON Schema cannot state, stated in words
 * instead: a base58 string that does not decode to 32 bytes is no mint address (SYMBOL_OR_MINT_RULE
 * in every symbol's description, checked below); a CIDR range's host bits are zero (allowedIps).
 */
function statedInWords(answer: { code?: string; details?: { problems?: { message: string }[] } }): boolean {
  const problems = answer.details?.problems ?? [];
  if (problems.length === 0) return false;
  if (answer.code === 'INVALID_SYMBOL')
    return problems.every((p) => p.message.includes('not a valid Solana mint address'));
  return answer.code === 'VALIDATION_ERROR' && problems.every((p) => p.message.includes('has host bits set'));
}

// An open event stream answers until the client leaves, so a request to it never completes here;
// test/webhooks/stream.test.ts and test/streams/ cover them (their bad input included).
const STREAMS = new Set([
  'get /api/v1/webhooks/stream',
  'get /api/v1/stream/prices',
  'get /api/v1/stream/markets',
]);

describe('generated requests that their schema accepts', () => {
  it('are never refused (4xx) or failed (5xx), on any operation', async () => {
    const ajv = openApiAjv();
    const resolve = (ref: string) => doc.components.schemas[ref.split('/').pop() as string] as Json;
    const refused: string[] = [];
    let sent = 0;
    const succeeded = new Set<string>();
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        if (STREAMS.has(`${method} ${path}`)) continue;
        operations += 1;
        const parameters = operation.parameters ?? [];
        const bodySchema = operation.requestBody?.content['application/json'].schema;
        const checks = {
          body: bodySchema ? validatorOf(ajv, bodySchema) : undefined,
          parameters: parameters.map((p) => validatorOf(ajv, p.schema)),
        };
        for (let n = 0; n < SAMPLES_PER_OPERATION; n++) {
          const seed = SEED + n * 7919 + operations;
          // Reads look back at ranges that have happened (a few hours: the shortest candle interval
          // allows 24 h); writes schedule ahead, within the year a job may be scheduled.
          const looksBack = method === 'get';
          const start = () => ctx.clock.now().getTime() - (looksBack ? 2 * DAY : 0);
          const step = looksBack ? 50 * MINUTE : 20 * DAY;
          const gen: SampleContext = { random: seeded(seed), resolve, clock: start(), step, seed };
          // Draw until the schema's own validator accepts the whole request.
          let request: { path: string; query: Json; headers: Json; body: unknown } | undefined;
          for (let tries = 0; tries < 200 && !request; tries++) {
            gen.clock = start();
            let url = path;
            const query: Json = {};
            const headers: Json = {};
            let ok = true;
            parameters.forEach((p, i) => {
              // A cursor only the service makes (`x-opaque`): a generated one is a forgery, refused.
              if (!p.required && p.schema['x-opaque'] === true) return;
              if (!p.required && p.in !== 'path' && gen.random() < 0.5) return;
              const value = sample(gen, p.schema);
              if (!checks.parameters[i]?.(value)) ok = false;
              if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
              else if (p.in === 'query') query[p.name] = String(value);
              else headers[p.name] = String(value);
            });
            const body = bodySchema ? sample(gen, bodySchema) : undefined;
            if (checks.body && !checks.body(body)) ok = false;
            if (ok) request = { path: url, query, headers, body };
          }
          expect(request, `${method} ${path}: the generator found no schema-valid request`).toBeDefined();
          if (!request) continue;
          const search = new URLSearchParams(request.query as Record<string, string>).toString();
          const response = await ctx.request(account.key, {
            method: method.toUpperCase() as 'GET',
            url: `${request.path}${search ? `?${search}` : ''}`,
            headers: request.headers as Record<string, string>,
            ...(request.body === undefined ? {} : { payload: request.body as object }),
          });
          sent += 1;
          if (response.statusCode === 200) succeeded.add(`${method} ${path}`);
          const answer = response.json() as { code?: string };
          if (
            response.statusCode >= 500 ||
            (response.statusCode >= 400 && !DOMAIN_REFUSALS.has(answer.code ?? '') && !statedInWords(answer))
          ) {
            refused.push(
              `${method.toUpperCase()} ${request.path}?${search} ${JSON.stringify(request.body)} (seed ${seed}) → ${response.statusCode} ${response.body}`,
            );
          }
        }
      }
    }
    expect(operations).toBeGreaterThanOrEqual(30);
    // The rule stated in words is stated wherever a symbol or mint is read.
    const text = JSON.stringify(doc);
    expect(text.split('decodes to exactly 32 bytes').length - 1).toBeGreaterThanOrEqual(4);
    expect(text).toContain('whose host bits are zero');
    expect(sent).toBe(operations * SAMPLES_PER_OPERATION);
    expect(refused).toEqual([]);
    // The samples are requests the service does serve: every operation without a path parameter
    // (whose generated id names nothing) succeeded at least once — but the batch of prices, whose
    // generated symbols name no listed token (404 SYMBOL_NOT_FOUND: nothing could be priced).
    succeeded.add('post /api/v1/price/batch');
    const unserved = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v1/') && !path.includes('{'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`))
      .filter((operation) => !succeeded.has(operation) && !STREAMS.has(operation));
    expect(unserved).toEqual([]);
  });
});
