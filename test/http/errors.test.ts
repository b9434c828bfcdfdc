import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

let ctx: TestContext;
let account: TestAccount;

beforeAll(async () => {
  ctx = await createTestContext({ config: { BODY_LIMIT_BYTES: '2048' } });
  account = await ctx.createAccount();
});
afterAll(async () => {
  await ctx.close();
});

describe('error vocabulary at the HTTP edge', () => {
  it('unknown route → 404 NOT_FOUND with the request id in body and header', async () => {
    const response = await ctx.request(null, { method: 'GET', url: '/api/v1/nothing-here?x=1' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
    expect(response.json()).toEqual({
      error: 'No route GET /api/v1/nothing-here',
      code: 'NOT_FOUND',
      requestId: response.headers['x-request-id'],
    });
  });

  it('ignores a client-sent X-Request-Id: ids are ours and unique', async () => {
    const response = await ctx.request(null, {
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'client-chosen' },
    });
    expect(response.headers['x-request-id']).not.toBe('client-chosen');
  });

  it('malformed JSON → 400 VALIDATION_ERROR', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "x",',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      error: 'Malformed JSON body',
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'body', message: 'is not valid JSON' }] },
      requestId: response.headers['x-request-id'],
    });
  });

  it('oversized body → 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(5000) }),
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({
      error: 'The request body is larger than this service accepts',
      code: 'PAYLOAD_TOO_LARGE',
      requestId: response.headers['x-request-id'],
    });
  });

  it('VALIDATION_ERROR lists every problem with where it is', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      payload: { permissions: ['price', 'teleport'], admin: true, allowedIps: 'x' },
    });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.code).toBe('VALIDATION_ERROR');
    const paths = body.details.problems.map((p: { path: string }) => p.path).sort();
    expect(paths).toEqual(['body.admin', 'body.allowedIps', 'body.name', 'body.permissions[1]']);
  });

  it('a non-object JSON body is a validation error, not a crash', async () => {
    for (const payload of ['[]', '"text"', '42', 'null']) {
      const response = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/keys',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(response.statusCode, payload).toBe(400);
      expect(response.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('a wrong content type is a validation error', async () => {
    const response = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'header.content-type', message: 'must be application/json' }] },
    });
  });

  it('a malformed percent-escape in the URL → 400 VALIDATION_ERROR, before authentication', async () => {
    const response = await ctx.request(null, { method: 'GET', url: '/api/v1/price/%E0%A4%A' });
    expect(response.statusCode).toBe(400);
    expect(response.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
    expect(response.json()).toEqual({
      error: 'The URL has a malformed percent-escape',
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'url', message: 'has a malformed percent-escape' }] },
      requestId: response.headers['x-request-id'],
    });
  });

  it('an over-long path segment → 414 URI_TOO_LONG, echoing none of it', async () => {
    const response = await ctx.request(null, { method: 'GET', url: `/api/v1/price/${'a'.repeat(8000)}` });
    expect(response.statusCode).toBe(414);
    expect(response.json()).toEqual({
      error: 'A segment of the URL path is longer than 100 characters',
      code: 'URI_TOO_LONG',
      requestId: response.headers['x-request-id'],
    });
  });

  it('an unknown over-long path → 404 NOT_FOUND echoing only a short prefix', async () => {
    const response = await ctx.request(null, { method: 'GET', url: `/api/v1/${'b'.repeat(8000)}` });
    expect(response.statusCode).toBe(404);
    const body = response.json();
    expect(body).toEqual({
      error: `No route GET /api/v1/${'b'.repeat(92)}…`,
      code: 'NOT_FOUND',
      requestId: response.headers['x-request-id'],
    });
  });

  it('JSON in a charset other than UTF-8 → 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const contentType of ['application/json; charset=utf-16', 'application/json;charset="ISO-8859-1"']) {
      const response = await ctx.request(account.key, {
        method: 'POST',
        url: '/api/v1/keys',
        headers: { 'content-type': contentType },
        payload: Buffer.from(JSON.stringify({ name: 'x' }), 'utf16le'),
      });
      expect(response.statusCode, contentType).toBe(415);
      expect(response.json()).toEqual({
        error:
          'JSON bodies must be UTF-8 encoded (Content-Type: application/json; charset=utf-8, or no charset)',
        code: 'UNSUPPORTED_MEDIA_TYPE',
        requestId: response.headers['x-request-id'],
      });
    }
    const utf8 = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      payload: JSON.stringify({ name: 'utf-8 is fine' }),
    });
    expect(utf8.statusCode).toBe(200);
  });

  it('health endpoints are open and free', async () => {
    expect((await ctx.request(null, { method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await ctx.request(null, { method: 'GET', url: '/readyz' })).json()).toMatchObject({
      status: 'ready',
    });
  });
});
