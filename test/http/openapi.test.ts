import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { openApiAjv } from '../helpers/openapi-ajv.js';

let ctx: TestContext;
let doc: {
  openapi: string;
  paths: Record<
    string,
    Record<string, { security?: unknown; responses: Record<string, { description: string }> }>
  >;
  components: { securitySchemes: Record<string, unknown> };
};

beforeAll(async () => {
  ctx = await createTestContext();
  const response = await ctx.request(null, { method: 'GET', url: '/api/v1/openapi.json' });
  expect(response.statusCode).toBe(200);
  doc = response.json();
});
afterAll(async () => {
  await ctx.close();
});

/**
 * The components nothing uses: not reached by a `$ref` from the paths (directly or through other
 * components reached so), and, for security schemes, named by no `security` requirement.
 */
function unusedComponents(document: unknown): string[] {
  const { paths, webhooks, components, security } = document as {
    paths: unknown;
    webhooks?: unknown;
    components: Record<string, Record<string, unknown>>;
    security?: Record<string, unknown>[];
  };
  const refsIn = (node: unknown) =>
    [...JSON.stringify(node).matchAll(/"\$ref":"#\/components\/(\w+)\/([^"]+)"/g)].map(
      ([, kind, name]) => `${kind}/${name}`,
    );
  const used = new Set<string>();
  const pending = [...refsIn(paths), ...refsIn(webhooks ?? {})];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (used.has(next)) continue;
    used.add(next);
    const [kind, name] = next.split('/') as [string, string];
    pending.push(...refsIn(components[kind]?.[name]));
  }
  const requirements = [
    ...(security ?? []),
    ...Object.values(paths as Record<string, Record<string, { security?: Record<string, unknown>[] }>>)
      .flatMap((item) => Object.values(item))
      .flatMap((operation) => operation.security ?? []),
  ];
  for (const requirement of requirements)
    for (const scheme of Object.keys(requirement)) used.add(`securitySchemes/${scheme}`);
  return Object.entries(components)
    .flatMap(([kind, named]) => Object.keys(named).map((name) => `${kind}/${name}`))
    .filter((component) => !used.has(component));
}

describe('OpenAPI document', () => {
  it('lists every account event type under webhooks, each posting its payload { id, type, createdAt, mode, data }', async () => {
    const catalog = (await ctx.request(null, { method: 'GET', url: '/api/v1/webhooks/event-types' })).json()
      .eventTypes as { name: string; schema: unknown }[];
    const webhooks = (doc as unknown as { webhooks: Record<string, { post: { requestBody: unknown } }> })
      .webhooks;
    expect(Object.keys(webhooks)).toEqual(catalog.map((t) => t.name));
    const body = webhooks['balance.low']?.post.requestBody as {
      content: { 'application/json': { schema: { $ref: string } } };
    };
    expect(body.content['application/json'].schema.$ref).toBe('#/components/schemas/BalanceLowEvent');
    const validate = openApiAjv().compile({
      $ref: '#/components/schemas/BalanceLowEvent',
      components: doc.components,
    });
    const event = {
      id: 'evt_4kQz8wJ3nR6tYb2pXc9mVh1L',
      type: 'balance.low',
      createdAt: '2026-12-01T12:00:00.000Z',
      mode: 'live',
      data: { thresholdUsd: '5.00', balanceUsd: '4.99', accountId: 'acc_1' },
    };
    expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...event, type: 'balance.depleted' })).toBe(false);
    expect(validate({ ...event, data: { thresholdUsd: '5.00' } })).toBe(false);
  });

  it('is OpenAPI 3.1 with the bearer security scheme', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('describes every API route, with security and every error response', () => {
    for (const route of ctx.app.apiRoutes) {
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      const operation = doc.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${path}`).toBeDefined();
      if (!operation) continue;
      expect(operation.security).toEqual([{ bearerAuth: [] }]);
      const statuses = Object.keys(operation.responses);
      for (const status of ['200', '401', '403', '500']) expect(statuses, path).toContain(status);
      if (route.priced) expect(statuses).toContain('402');
      expect(operation.responses['401']?.description).toContain('INVALID_API_KEY');
    }
    expect(doc.paths['/api/v1/keys/{keyId}/rotate']?.post?.responses['409']?.description).toContain(
      'KEY_ROTATION_IN_PROGRESS',
    );
    expect(doc.paths['/api/v1/keys']?.post?.responses['413']).toBeDefined();
  });

  it('describes the dashboard’s endpoints under their own tag, with the session cookie as their security', () => {
    expect(doc.components.securitySchemes.cookieAuth).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'sibyl_session',
    });
    const dashboard = Object.entries(doc.paths).filter(([path]) => path.startsWith('/dashboard/api/'));
    expect(dashboard.length).toBeGreaterThanOrEqual(20);
    for (const [path, item] of dashboard) {
      for (const operation of Object.values(item) as unknown as { tags: string[]; security: unknown[] }[]) {
        expect(operation.tags, path).toEqual(['dashboard']);
        const signIn = [
          '/dashboard/api/auth/challenge',
          '/dashboard/api/auth/verify',
          '/dashboard/api/auth/logout',
        ];
        expect(operation.security, path).toEqual(signIn.includes(path) ? [] : [{ cookieAuth: [] }]);
      }
    }
    const verify = doc.paths['/dashboard/api/auth/verify']?.post?.responses['401']?.description;
    expect(verify).toContain('SIGN_IN_REJECTED');
    const keys = doc.paths['/dashboard/api/{mode}/keys']?.get?.responses['401']?.description;
    expect(keys).toContain('SESSION_EXPIRED');
    expect(doc.paths['/api/v1/account/usage']?.get).toBeDefined();
    expect(doc.paths['/api/v1/ai/requests']?.get).toBeDefined();
  });

  it('states each stream operation’s real price: per started minute for the metered ones, free for the webhook stream', () => {
    const description = (path: string) =>
      (doc.paths[path]?.get as unknown as { description: string } | undefined)?.description ?? '';
    for (const path of [
      '/api/v1/stream/prices',
      '/api/v1/stream/markets',
      '/dashboard/api/{mode}/stream/markets',
    ]) {
      expect(description(path)).toMatch(/Price: 0\.002 USD per started minute of connection\.$/);
      expect(description(path)).not.toMatch(/at no charge|Price: free/);
    }
    expect(description('/dashboard/api/{mode}/stream/markets')).toContain('charged to it at the same price');
    expect(description('/api/v1/webhooks/stream')).toMatch(/Price: free\.$/);
  });

  it('states the stream operations’ lists as the handler reads them: a pattern every accepted list matches, ASCII, at most 50', async () => {
    const { streamedMarkets } = await import('../../src/streams/market-ids.js');
    const { streamedTokens } = await import('../../src/streams/symbols.js');
    const param = (path: string, name: string) => {
      const operation = doc.paths[path]?.get as unknown as {
        parameters: { name: string; schema: { pattern?: string; maxLength?: number } }[];
      };
      const schema = operation.parameters.find((p) => p.name === name)?.schema;
      expect(schema?.pattern, `${path} ${name}`).toEqual(expect.any(String));
      expect(schema?.maxLength, `${path} ${name}`).toEqual(expect.any(Number));
      return new RegExp(schema?.pattern as string);
    };
    const symbols = param('/api/v1/stream/prices', 'symbols');
    const ids = param('/api/v1/stream/markets', 'ids');
    const mint = 'So11111111111111111111111111111111111111112';
    const fifty = (entry: (i: number) => string) => Array.from({ length: 50 }, (_, i) => entry(i)).join(',');
    const symbolLists = ['SOL', 'SOL, JUP ,bonk', fifty((i) => `S${i}`), fifty(() => mint)];
    const idLists = [
      'a',
      'm-1, m_2 ,x.y:z',
      fifty((i) => `m${i}`),
      fifty((i) => `${i}${'x'.repeat(99)}`.slice(0, 100)),
    ];
    for (const list of symbolLists) {
      expect(symbols.test(list), list).toBe(true);
      // Schema-valid is never a 400: a symbol the registry does not know is a 404.
      try {
        streamedTokens(list);
      } catch (err) {
        expect((err as { code: string }).code).toBe('SYMBOL_NOT_FOUND');
      }
    }
    for (const list of idLists) {
      expect(ids.test(list), list).toBe(true);
      await expect(streamedMarkets(ctx.database.db, list)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    }
    for (const bad of [`${fifty((i) => `S${i}`)},X`, 'SOL,,JUP', 'SOLÉ', 'ünïcödé'])
      expect(symbols.test(bad) || ids.test(bad), bad).toBe(false);
  });

  it('declares every tag an operation uses', () => {
    const declared = new Set(
      ((doc as unknown as { tags: { name: string }[] }).tags ?? []).map((t) => t.name),
    );
    const used = new Set(
      Object.values(doc.paths as Record<string, Record<string, { tags?: string[] }>>)
        .flatMap((item) => Object.values(item))
        .flatMap((operation) => operation.tags ?? []),
    );
    expect([...used].filter((tag) => !declared.has(tag))).toEqual([]);
    expect(used.has('webhooks')).toBe(true);
  });

  it('names its schemas as components and refers to them, so generated clients get importable types', () => {
    const schemas = (doc.components as unknown as { schemas: Record<string, unknown> }).schemas;
    for (const name of ['PriceResult', 'BatchPriceResult', 'PriceHistory', 'Account', 'ApiKey'])
      expect(Object.keys(schemas), name).toContain(name);
    // Nothing unused: the error bodies are each status's own schema.
    expect(Object.keys(schemas)).not.toContain('ErrorBody');
    const price = doc.paths['/api/v1/price/{symbolOrMint}']?.get?.responses['200'] as unknown as {
      content: { 'application/json': { schema: unknown } };
    };
    expect(price.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PriceResult' });
    // Every reference resolves.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/(\w+)\/([\w-]+)"/g)];
    expect(refs.length).toBeGreaterThan(50);
    const components = doc.components as unknown as Record<string, Record<string, unknown>>;
    for (const [, kind, name] of refs)
      expect(components[kind as string]?.[name as string], `${kind}/${name}`).toBeDefined();
  });

  it('has no component that nothing refers to (the error vocabulary is each answer’s own `code`)', () => {
    expect(unusedComponents(doc)).toEqual([]);
    // The check sees one: a schema no path reaches, and one reached only through it.
    const copy = structuredClone(doc) as unknown as { components: { schemas: Record<string, unknown> } };
    copy.components.schemas.Orphan = {
      type: 'object',
      properties: { a: { $ref: '#/components/schemas/Leaf' } },
    };
    copy.components.schemas.Leaf = { type: 'string' };
    expect(unusedComponents(copy)).toEqual(['schemas/Orphan', 'schemas/Leaf']);
  });

  it('carries real, recorded examples, each valid against its schema', () => {
    const schemas = (doc.components as unknown as { schemas: Record<string, { examples?: unknown[] }> })
      .schemas;
    const withExamples = Object.keys(schemas).filter((name) => schemas[name]?.examples?.length);
    for (const name of [
      'PriceResult',
      'BatchPriceResult',
      'PriceHistory',
      'Account',
      'ApiKey',
      'MarketDetail',
    ])
      expect(withExamples).toContain(name);
    expect(Object.keys(schemas).filter((name) => !withExamples.includes(name))).toEqual([]);
    const ajv = openApiAjv();
    for (const name of withExamples) {
      const validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components: doc.components });
      for (const example of schemas[name]?.examples ?? []) {
        expect(validate(example), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
    const price = schemas.PriceResult?.examples?.[0] as { symbol: string; vwapPrice: number };
    expect(price.symbol).toBe('SOL');
    expect(price.vwapPrice).toBeGreaterThan(1);
  });

  it('shows one recorded answer per code under each error status, each valid against that status’s schema', () => {
    // The codes no request provokes on a service that works as it should (scripts/error-examples.js,
    // UNRECORDED); every other code is recorded, the rare moments by scripts/rare-error-examples.js.
    const UNRECORDED = new Set(['INTERNAL_ERROR', 'ACCOUNT_NOT_FOUND']);
    const ajv = openApiAjv();
    const missing: string[] = [];
    let shown = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue;
          const media = (
            response as {
              content?: {
                'application/json': {
                  schema: { properties?: { code?: { enum: string[] } } };
                  examples?: Record<string, { value: { code: string; error: string } }>;
                };
              };
            }
          ).content?.['application/json'];
          if (!media) continue;
          const where = `${method} ${path} ${status}`;
          const codes = media.schema.properties?.code?.enum;
          const examples = media.examples ?? {};
          if (!codes) {
            // A body that is not an error (/readyz's 503, the readiness report): its own recorded answer.
            const value = (examples as Record<string, { value: unknown }>)[status]?.value;
            if (value === undefined) missing.push(`${where}: no recorded example (operationId:${status})`);
            else {
              const validate = ajv.compile({ ...media.schema, components: doc.components });
              expect(validate(value), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
            }
            continue;
          }
          for (const code of codes)
            if (!UNRECORDED.has(code) && !(code in examples))
              missing.push(`${where}: no recorded example of ${code} (scripts/error-examples.js)`);
          expect(
            Object.keys(examples).filter((code) => !codes.includes(code)),
            `${where}: examples of codes it does not document`,
          ).toEqual([]);
          const validate = ajv.compile({ ...media.schema, components: doc.components });
          for (const [code, example] of Object.entries(examples)) {
            expect(example.value.code, where).toBe(code);
            expect(validate(example.value), `${where} ${code}: ${JSON.stringify(validate.errors)}`).toBe(
              true,
            );
            shown += 1;
          }
        }
      }
    }
    expect(missing, 'documented error answers without a recorded example').toEqual([]);
    expect(shown).toBeGreaterThan(300);
    expect(JSON.stringify(doc)).not.toMatch(/additionalProp\d/);
    // A route's own answer where it has one: the market's NOT_FOUND names a market.
    const market = doc.paths['/api/v1/markets/{id}']?.get?.responses['404'] as unknown as {
      content: { 'application/json': { examples: { NOT_FOUND: { value: { error: string } } } } };
    };
    expect(market.content['application/json'].examples.NOT_FOUND.value.error).toMatch(/^Market /);
    // The rare moments, recorded as they happen: a database that does not answer, a retry racing its
    // first request, every venue down.
    type Media = { examples?: Record<string, { value: Record<string, unknown> }> };
    const exampleOf = (path: string, method: string, status: string, name: string) => {
      const operation = (doc.paths[path] as Record<string, { responses: Record<string, unknown> }>)[method];
      const response = operation?.responses[status] as { content?: Record<string, Media> } | undefined;
      return response?.content?.['application/json']?.examples?.[name]?.value;
    };
    expect(exampleOf('/readyz', 'get', '503', '503')).toMatchObject({ status: 'unavailable' });
    expect(exampleOf('/api/v1/ai/resolve', 'post', '409', 'IDEMPOTENCY_KEY_IN_USE')).toMatchObject({
      details: { lockExpiresInSeconds: expect.any(Number) },
    });
    expect(exampleOf('/api/v1/price/{symbolOrMint}', 'get', '503', 'PRICE_UNAVAILABLE')).toMatchObject({
      details: { unavailableSources: expect.arrayContaining([{ name: 'binance', reason: 'http_error' }]) },
    });
  });

  it('gives each error status of each operation the enum of codes it can carry', () => {
    const batch = doc.paths['/api/v1/price/batch']?.post?.responses as unknown as Record<
      string,
      { content: { 'application/json': { schema: { properties: { code: { enum: string[] } } } } } }
    >;
    const codes = (status: string) => batch[status]?.content['application/json'].schema.properties.code.enum;
    expect(codes('402')).toEqual(['INSUFFICIENT_BALANCE']);
    expect(codes('429')).toEqual(['RATE_LIMIT_EXCEEDED', 'QUOTA_EXCEEDED']);
    expect(codes('400')).toEqual(expect.arrayContaining(['VALIDATION_ERROR', 'BATCH_LIMIT_EXCEEDED']));
    expect(codes('409')).toEqual(['IDEMPOTENCY_KEY_IN_USE']);
  });

  it('lists every 429 code an operation’s description promises among its 429 responses (API and dashboard)', () => {
    const missing: string[] = [];
    let promised = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const { description = '', responses } = operation as {
          description?: string;
          responses: Record<
            string,
            { content?: Record<string, { schema: { properties: { code: { enum: string[] } } } }> }
          >;
        };
        const codes = responses['429']?.content?.['application/json']?.schema.properties.code.enum ?? [];
        for (const [, code] of description.matchAll(/429 `?([A-Z_]+)`?/g)) {
          promised += 1;
          if (!codes.includes(code as string)) missing.push(`${method} ${path}: ${code}`);
        }
      }
    }
    expect(promised).toBeGreaterThan(2);
    expect(missing).toEqual([]);
  });

  it('documents the response headers: X-Request-Id everywhere, RateLimit-* when authenticated, Retry-After', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const headers = Object.keys((response as { headers?: object }).headers ?? {});
          const where = `${method} ${path} ${status}`;
          expect(headers, where).toContain('X-Request-Id');
          const keyed = (operation.security as object[] | undefined)?.some(
            (scheme) => 'bearerAuth' in scheme,
          );
          if (keyed) expect(headers, where).toContain('RateLimit-Remaining');
          else expect(headers, where).not.toContain('RateLimit-Remaining');
          if (status === '429' || status === '503') expect(headers, where).toContain('Retry-After');
        }
      }
    }
    const batch = doc.paths['/api/v1/price/batch']?.post?.responses as unknown as Record<
      string,
      { headers: object }
    >;
    expect(Object.keys(batch['409']?.headers ?? {})).toContain('Retry-After');
    expect(Object.keys(batch['200']?.headers ?? {})).toContain('Idempotent-Replayed');
  });

  it('states the rules the handlers enforce, as JSON Schema keywords', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain('x-handler-rules');
    const ajv = openApiAjv();
    const components = doc.components as unknown as { schemas: Record<string, Record<string, unknown>> };
    const valid = (name: string, value: unknown) =>
      ajv.validate({ $ref: `#/components/schemas/${name}`, components: doc.components }, value);
    // POST /ai/resolve: a question with its outcomes and callback, or a market.
    expect(valid('AiResolveRequest', {})).toBe(false);
    expect(valid('AiResolveRequest', { marketId: 'm-1' })).toBe(true);
    expect(valid('AiResolveRequest', { marketId: 'm-1', question: 'Q?' })).toBe(false);
    const question = { question: 'Q?', outcomes: ['Yes', 'No'], callbackUrl: 'https://example.com/hook' };
    expect(valid('AiResolveRequest', question)).toBe(true);
    expect(valid('AiResolveRequest', { ...question, callbackUrl: 'http://example.com/hook' })).toBe(false);
    // POST /ai/schedule: the same limits.
    const at = '2027-06-30T12:00:00Z';
    expect(valid('AiScheduleRequest', { ...question, resolutionTimestamp: at })).toBe(true);
    expect(valid('AiScheduleRequest', { ...question, outcomes: ['Yes'], resolutionTimestamp: at })).toBe(
      false,
    );
    expect(valid('AiScheduleRequest', { ...question, question: '', resolutionTimestamp: at })).toBe(false);
    expect(valid('AiScheduleRequest', { ...question, resolutionTimestamp: '2027-06-30' })).toBe(false);
    // Symbols, the batch's size, quotas, restrictions.
    expect(valid('BatchPriceRequest', { symbols: Array.from({ length: 51 }, (_, i) => `T${i}`) })).toBe(
      false,
    );
    expect(valid('BatchPriceRequest', { symbols: ['SOL', 'not a symbol'] })).toBe(false);
    expect(valid('CreateKeyRequest', { name: 'k', quotas: { dailySpendUsd: '5.00' } })).toBe(true);
    expect(valid('CreateKeyRequest', { name: 'k', quotas: { dailySpendUsd: 'five' } })).toBe(false);
    expect(valid('CreateKeyRequest', { name: 'k', ipRestrictionEnabled: true })).toBe(false);
    expect(
      valid('CreateKeyRequest', { name: 'k', ipRestrictionEnabled: true, allowedIps: ['10.0.0.0/8'] }),
    ).toBe(true);
    expect(valid('CreateKeyRequest', { name: '   ' })).toBe(false);
    const burst = (
      (components.schemas.CreateKeyRequest as { properties: unknown }).properties as Record<
        string,
        { anyOf: { properties: { burst: { maximum: number } } }[] }
      >
    ).rateLimit?.anyOf[0]?.properties.burst.maximum;
    expect(burst).toBe(ctx.config.access.ceilings.maxBurst);
    // Query and path parameters.
    const parameter = (path: string, name: string) => {
      const operation = doc.paths[path]?.get as unknown as
        | { parameters: { name: string; schema: Record<string, unknown> }[] }
        | undefined;
      return operation?.parameters.find((p) => p.name === name)?.schema;
    };
    expect(parameter('/api/v1/account/transactions', 'startingAfter')?.pattern).toBe('^\\d{1,18}$');
    expect(parameter('/api/v1/account/transactions', 'from')?.format).toBe('date-time');
    expect(parameter('/api/v1/historical/price/{symbol}', 'startTime')?.format).toBe('date-time');
    expect(parameter('/api/v1/price/{symbolOrMint}', 'symbolOrMint')?.pattern).toBeDefined();
    expect(parameter('/api/v1/markets/{id}', 'id')?.maxLength).toBe(100);
  });

  it('documents 414 URI_TOO_LONG on every operation with a path parameter, the dashboard’s too, and no security on health', () => {
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/') && !path.startsWith('/dashboard/api/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        const codes = JSON.stringify(operation.responses['414'] ?? null);
        if (path.includes('{')) expect(codes, `${method} ${path}`).toContain('URI_TOO_LONG');
        else expect(operation.responses['414'], `${method} ${path}`).toBeUndefined();
      }
    }
    expect(doc.paths['/healthz']?.get?.security).toEqual([]);
    expect(doc.paths['/readyz']?.get?.security).toEqual([]);
  });

  it('documents 431 HEADERS_TOO_LARGE on the stream operations whose list is in the query, and such a list past 16 KiB gets it', async () => {
    // EventSource has no body: a stream's list is in the request line, which Node's parser bounds
    // (16 KiB with the headers) before any route runs (docs/api.md#errors).
    const lists: Record<string, string> = {
      '/api/v1/stream/prices': 'symbols',
      '/api/v1/stream/markets': 'ids',
      '/dashboard/api/{mode}/stream/markets': 'ids',
    };
    const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const long = Array.from({ length: 2000 }, (_, i) => `entry${i}`).join(',');
    for (const [path, name] of Object.entries(lists)) {
      const answer = doc.paths[path]?.get?.responses['431'] as unknown as {
        content: { 'application/json': { examples: Record<string, { value: { code: string } }> } };
      };
      expect(answer, path).toBeDefined();
      expect(JSON.stringify(answer), path).toContain('HEADERS_TOO_LARGE');
      expect(answer.content['application/json'].examples.HEADERS_TOO_LARGE?.value.code).toBe(
        'HEADERS_TOO_LARGE',
      );
      const response = await fetch(`${base}${path.replace('{mode}', 'sandbox')}?${name}=${long}`);
      expect(response.status, path).toBe(431);
      expect(await response.json()).toMatchObject({ code: 'HEADERS_TOO_LARGE' });
    }
  });

  it('names its server: PUBLIC_BASE_URL when set, else the listening address', async () => {
    expect((doc as unknown as { servers: unknown }).servers).toEqual([
      { url: `http://127.0.0.1:${ctx.config.port}` },
    ]);
    const other = await createTestContext({ config: { PUBLIC_BASE_URL: 'https://api.example.com/' } });
    try {
      const response = await other.request(null, { method: 'GET', url: '/api/v1/openapi.json' });
      expect(response.json().servers).toEqual([{ url: 'https://api.example.com' }]);
    } finally {
      await other.close();
    }
  });

  it('links the guides, and serves them as HTML pages whose links between them work', async () => {
    const description = (doc as unknown as { info: { description: string } }).info.description;
    const links = [...description.matchAll(/\]\((\/docs\/guides\/[\w-]+\.md)\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThanOrEqual(7);
    const pages = new Map<string, string>();
    const fetchPage = async (url: string) => {
      const cached = pages.get(url);
      if (cached !== undefined) return cached;
      const page = await ctx.request(null, { method: 'GET', url });
      expect(page.statusCode, url).toBe(200);
      expect(page.headers['content-type'], url).toBe('text/html; charset=utf-8');
      pages.set(url, page.body);
      return page.body;
    };
    for (const link of links) {
      const html = await fetchPage(link);
      expect(html, link).toMatch(/^<!doctype html>/);
      expect(html, link).toMatch(/<h1 id="[^"]+">/);
      expect(html, link).not.toMatch(/^# /m);
    }
    // Every link of every guide to another guide (or a section of one) lands on a page and an id.
    let checked = 0;
    for (const url of pages.keys()) {
      // pages found on the way are visited too
      const html = await fetchPage(url);
      for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
        if (/^(https?:|mailto:|\/docs$)/.test(href as string)) continue;
        const [target, anchor] = (href as string).split('#');
        const page = target ? new URL(target, `http://x${url}`).pathname : url;
        if (!page.endsWith('.md')) continue;
        const body = await fetchPage(page);
        if (anchor) expect(body, `${url} → ${href}`).toContain(`id="${anchor}"`);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(30);
    // The dashboard guide's screenshots are served too.
    const image = /<img src="([^"]+)"/.exec(await fetchPage('/docs/guides/dashboard.md'))?.[1];
    expect(image).toBeDefined();
    const png = await ctx.request(null, {
      method: 'GET',
      url: new URL(image as string, 'http://x/docs/guides/').pathname,
    });
    expect(png.statusCode).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    const missing = await ctx.request(null, { method: 'GET', url: '/docs/guides/..%2Fpackage.json' });
    expect(missing.statusCode).toBe(404);
  });

  it('serves a reference page from local assets only', async () => {
    const page = await ctx.request(null, { method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('<title>Sibyl API reference</title>');
    expect((doc as unknown as { info: { license: unknown } }).info.license).toEqual({
      name: 'MIT',
      identifier: 'MIT',
    });
    const external = [...page.body.matchAll(/(?:src|href)="(https?:\/\/[^"]+)"/g)].map((m) => m[1]);
    expect(external).toEqual([]);
    const script = page.body.match(/src="\.?\/?([^"]*swagger-ui-bundle\.js)"/)?.[1];
    expect(script).toBeDefined();
    const asset = await ctx.request(null, { method: 'GET', url: `/docs/${script?.replace(/^docs\//, '')}` });
    expect(asset.statusCode).toBe(200);
  });
});
