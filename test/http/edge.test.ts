import { connect, type Socket } from 'node:net';
import Type from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineRoute } from '../../src/http/route.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

/**
 * What a real client on a real socket gets for requests the HTTP parser refuses before any route
 * runs: the one error body, with a request id in the body and in X-Request-Id.
 */
let ctx: TestContext;
let account: TestAccount;
let port: number;
let release: () => void = () => {};
/** Resolved when the held route is running, and when the app has begun to close. */
let heldEntered = signal();
let closingStarted = signal();
const TIMEOUT_MS = 1000;

function signal(): Promise<void> & { resolve(): void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return Object.assign(promise, { resolve });
}

beforeAll(async () => {
  ctx = await createTestContext({
    config: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) },
    extraRoutes: (app) => {
      // After the app's own preClose hook, which starts refusing requests.
      app.addHook('preClose', (done) => {
        closingStarted.resolve();
        done();
      });
      defineRoute(app, {
        method: 'GET',
        url: '/test/held',
        operationId: 'testHeld',
        summary: 'Test probe: answers when the test lets it',
        tags: ['test'],
        permission: 'account',
        response: Type.Object({ ok: Type.Boolean() }),
        handler: () =>
          new Promise<{ ok: boolean }>((resolve) => {
            release = () => resolve({ ok: true });
            heldEntered.resolve();
          }),
      });
    },
  });
  account = await ctx.createAccount();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await ctx.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    answers.push({
      status: Number(statusLine?.split(' ')[1]),
      headers,
      body: rest.slice(end + 4, end + 4 + length),
    });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

/**
 * Opens a socket, lets `drive` write to it, and collects what the server sends until it closes the
 * connection or `waitMs` passes (the bound: no answer by then is a failure).
 */
function exchange(
  drive: (socket: Socket) => void,
  waitMs: number,
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => drive(socket));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
  });
}

function expectErrorBody(answer: RawAnswer | undefined, status: number, body: object): void {
  expect(answer?.status).toBe(status);
  expect(answer?.headers['content-type']).toMatch(/^application\/json/);
  expect(answer?.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
  expect(JSON.parse(answer?.body ?? '')).toEqual({ ...body, requestId: answer?.headers['x-request-id'] });
}

describe('answers written before any route runs', () => {
  it('headers over the size limit → 431 HEADERS_TOO_LARGE', async () => {
    const { text } = await exchange(
      (s) => s.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      5000,
    );
    expectErrorBody(parseAnswers(text)[0], 431, {
      error: 'The request line and headers are larger than 16384 bytes',
      code: 'HEADERS_TOO_LARGE',
    });
  });

  it('a request that is not HTTP → 400 VALIDATION_ERROR', async () => {
    const { text } = await exchange((s) => s.write('HELLO THERE\r\n\r\n'), 5000);
    expectErrorBody(parseAnswers(text)[0], 400, {
      error: 'Malformed HTTP request',
      code: 'VALIDATION_ERROR',
      details: { problems: [{ path: 'request', message: 'is not a well-formed HTTP/1.1 request' }] },
    });
  });

  it(`headers then silence → 408 REQUEST_TIMEOUT once REQUEST_TIMEOUT_MS (${TIMEOUT_MS} ms) is over`, async () => {
    const { text, closed } = await exchange((s) => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'), 5000);
    expect(closed).toBe(true);
    expectErrorBody(parseAnswers(text)[0], 408, {
      error: `The request was not received in full within ${TIMEOUT_MS} ms`,
      code: 'REQUEST_TIMEOUT',
    });
  });

  it('a body trickled a byte at a time → 408 REQUEST_TIMEOUT: the bound is for headers and body together', async () => {
    const body = JSON.stringify({ name: 'slow' });
    let timer: NodeJS.Timeout | undefined;
    const { text, closed } = await exchange((s) => {
      s.write(
        `POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      let sent = 0;
      timer = setInterval(() => {
        if (sent < body.length && !s.destroyed) s.write(body[sent++] as string);
      }, 300);
    }, 5000);
    clearInterval(timer);
    expect(closed).toBe(true);
    expectErrorBody(parseAnswers(text)[0], 408, {
      error: `The request was not received in full within ${TIMEOUT_MS} ms`,
      code: 'REQUEST_TIMEOUT',
    });
  });

  it('a request arriving while the server shuts down → 503 SERVICE_UNAVAILABLE', async () => {
    const request = (url: string) =>
      `GET ${url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.key}\r\n\r\n`;
    heldEntered = signal();
    closingStarted = signal();
    let socket: Socket | undefined;
    const answered = exchange((s) => {
      socket = s;
      s.write(request('/api/v1/test/held'));
    }, 15_000);
    // Each step waits for the server to have got there, never for a time.
    await heldEntered;
    const closing = ctx.app.close();
    await closingStarted;
    const lateArrived = new Promise<void>((resolve) => {
      const seen = (req: { url?: string }) => {
        if (req.url !== '/api/v1/account') return;
        ctx.app.server.off('request', seen);
        resolve();
      };
      ctx.app.server.on('request', seen);
    });
    socket?.write(request('/api/v1/account')); // on the connection still busy with the first
    await lateArrived;
    release();
    const { text } = await answered;
    await closing;
    const [held, late] = parseAnswers(text);
    expect(held?.status).toBe(200);
    expect(late?.headers.connection).toBe('close');
    expect(late?.headers['retry-after']).toBe('5');
    expectErrorBody(late, 503, {
      error: 'The service is shutting down; retry on another instance',
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});
