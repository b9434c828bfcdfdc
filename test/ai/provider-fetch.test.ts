import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noRedirectFetch } from '../../src/ai/providers/fetch.js';
import { type FakeServer, startFakeServer } from '../helpers/fake-server.js';

/**
 * The `Response` a provider call gets back (src/ai/providers/fetch.ts): read whole, without a web
 * stream, yet read as `fetch`'s is — through `body.getReader()` as the AI SDK reads it, or `text()`,
 * `json()`, `arrayBuffer()`, `blob()` — and only once.
 */
describe('a provider call’s response', () => {
  let server: FakeServer;
  const answer = { id: 'chatcmpl-1', choices: [{ message: { content: 'é ✓' } }] };
  beforeAll(async () => {
    server = await startFakeServer((request) =>
      request.url.pathname === '/empty'
        ? { status: 204 }
        : { status: 429, headers: { 'retry-after': '3' }, body: answer },
    );
  });
  afterAll(() => server.close());

  const call = () => noRedirectFetch(`${server.url}/v1/chat`, { method: 'POST', body: '{}' });

  it('keeps the status and headers, and gives the body as one chunk through getReader()', async () => {
    const response = await call();
    expect(response.status).toBe(429);
    expect(response.ok).toBe(false);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.bodyUsed).toBe(false);
    // Read as the AI SDK reads it: checked for null, then read (one body however often it is asked).
    expect(response.body).not.toBeNull();
    expect(response.body).toBe(response.body);
    expect(response.bodyUsed).toBe(false);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    await reader.cancel();
    reader.releaseLock();
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toEqual(answer);
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('answers text(), json(), arrayBuffer() and blob() with the same bytes, each body once', async () => {
    expect(JSON.parse(await (await call()).text())).toEqual(answer);
    expect(await (await call()).json()).toEqual(answer);
    const buffer = await (await call()).arrayBuffer();
    expect(JSON.parse(Buffer.from(buffer).toString('utf8'))).toEqual(answer);
    const blob = await (await call()).blob();
    expect(JSON.parse(await blob.text())).toEqual(answer);
    expect(blob.type).toMatch(/^application\/json/);
    const response = await call();
    const copy = response.clone();
    await response.json();
    await expect(response.json()).rejects.toThrow(TypeError);
    expect(await copy.json()).toEqual(answer);
  });

  it('a status without a body has none', async () => {
    const response = await noRedirectFetch(`${server.url}/empty`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
    expect(await response.text()).toBe('');
  });
});
