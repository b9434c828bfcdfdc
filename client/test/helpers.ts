import { type AddressInfo, createServer, type Server, Socket } from 'node:net';
import { createTestContext, type TestContext } from '../../test/helpers/context.js';

/** The service listening on a loopback port: the real app on a real database, reached over HTTP. */
export async function startService(
  options?: Parameters<typeof createTestContext>[0],
): Promise<{ ctx: TestContext; baseUrl: string }> {
  const ctx = await createTestContext(options);
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  return { ctx, baseUrl: `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}` };
}

/**
 * What the proxy does with one TCP connection from the client:
 * - `forward`: relay both ways;
 * - `drop`: close the connection before anything reaches the service;
 * - `drop-answer`: relay the request, and close the connection when the service starts answering —
 *   the request ran (and was charged) but the client never hears back;
 * - `{ status, … }`: answer this itself, as a proxy or a draining instance would, then close.
 */
export type ConnectionPlan =
  | 'forward'
  | 'drop'
  | 'drop-answer'
  | { status: number; headers?: Record<string, string>; body?: unknown };

export interface TcpProxy {
  url: string;
  /** Everything the client sent, one string per connection (request heads and bodies). */
  received: string[];
  /** Every `Idempotency-Key` the client sent, in order. */
  idempotencyKeys(): string[];
  close(): Promise<void>;
}

const REASONS: Record<number, string> = { 409: 'Conflict', 502: 'Bad Gateway', 503: 'Service Unavailable' };

/**
 * A TCP proxy in front of the service whose n-th connection follows `plans[n]` (then `forward`),
 * for what only a network can do to a client: drop a connection, lose an answer.
 */
export async function startProxy(target: string, plans: ConnectionPlan[]): Promise<TcpProxy> {
  const upstream = new URL(target);
  const received: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    const plan = plans[connections] ?? 'forward';
    const index = connections;
    connections += 1;
    received[index] = '';
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (plan === 'drop') {
      client.destroy();
      return;
    }
    if (typeof plan === 'object') {
      answerOnce(client, plan, (text) => {
        received[index] += text;
      });
      return;
    }
    const service = new Socket();
    sockets.add(service);
    service.on('close', () => sockets.delete(service));
    service.on('error', () => client.destroy());
    service.connect(Number(upstream.port), upstream.hostname);
    client.on('data', (chunk: Buffer) => {
      received[index] += chunk.toString('utf8');
      service.write(chunk);
    });
    client.on('end', () => service.end());
    service.on('data', (chunk: Buffer) => {
      if (plan === 'drop-answer') {
        service.destroy();
        client.destroy();
        return;
      }
      client.write(chunk);
    });
    service.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    idempotencyKeys: () =>
      received.flatMap((text) => [...text.matchAll(/^idempotency-key: *(.+?)\r$/gim)].map((m) => m[1] ?? '')),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads the request head (and a body of its `content-length`), then answers and closes. */
function answerOnce(
  client: Socket,
  answer: { status: number; headers?: Record<string, string>; body?: unknown },
  record: (text: string) => void,
): void {
  let text = '';
  client.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    record(chunk.toString('utf8'));
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return;
    const length = Number(/^content-length: *(\d+)\r$/im.exec(text.slice(0, end))?.[1] ?? '0');
    if (Buffer.byteLength(text.slice(end + 4)) < length) return;
    const body = JSON.stringify(answer.body ?? {});
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
      ...answer.headers,
    };
    client.end(
      `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? 'Error'}\r\n` +
        Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('') +
        `\r\n${body}`,
    );
  });
}

/** A `sleep` that waits for nothing and records every wait asked for. */
export function recordingSleep(onSleep?: (ms: number) => void | Promise<void>) {
  const waits: number[] = [];
  const sleep = async (ms: number) => {
    waits.push(ms);
    await onSleep?.(ms);
  };
  return { sleep, waits };
}
