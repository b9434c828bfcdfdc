import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';

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

describe('OpenAPI document', () => {
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
    for (const name of ['PriceResult', 'BatchPriceResult', 'PriceHistory', 'Account', 'ApiKey', 'ErrorBody'])
      expect(Object.keys(schemas), name).toContain(name);
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
      'ErrorBody',
    ])
      expect(withExamples).toContain(name);
    expect(Object.keys(schemas).filter((name) => !withExamples.includes(name))).toEqual([]);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
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

  it('links the guides, and serves them beside the reference page', async () => {
    const description = (doc as unknown as { info: { description: string } }).info.description;
    const links = [...description.matchAll(/\]\((\/docs\/guides\/[\w-]+\.md)\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThanOrEqual(7);
    for (const link of links) {
      const page = await ctx.request(null, { method: 'GET', url: link });
      expect(page.statusCode, link).toBe(200);
      expect(page.headers['content-type']).toContain('text/markdown');
      expect(page.body).toMatch(/^# /);
    }
    const missing = await ctx.request(null, { method: 'GET', url: '/docs/guides/..%2Fpackage.json' });
    expect(missing.statusCode).toBe(404);
  });

  it('serves a reference page from local assets only', async () => {
    const page = await ctx.request(null, { method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const external = [...page.body.matchAll(/(?:src|href)="(https?:\/\/[^"]+)"/g)].map((m) => m[1]);
    expect(external).toEqual([]);
    const script = page.body.match(/src="\.?\/?([^"]*swagger-ui-bundle\.js)"/)?.[1];
    expect(script).toBeDefined();
    const asset = await ctx.request(null, { method: 'GET', url: `/docs/${script?.replace(/^docs\//, '')}` });
    expect(asset.statusCode).toBe(200);
  });
});
