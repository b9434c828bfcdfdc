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
