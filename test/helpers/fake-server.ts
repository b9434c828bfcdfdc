import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON unless it is a string (sent as is). */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /**
   * Never answer (the connection stays open until the caller gives up or the server closes): how
   * a test exercises a timeout whatever the machine's speed, where a delay would race the timeout.
   */
  hang?: boolean;
}

export type FakeHandler = (request: FakeRequest) => FakeResponse | Promise<FakeResponse>;

export interface FakeServer {
  /** Base URL, e.g. http://127.0.0.1:40123 (no trailing slash). */
  url: string;
  /** Every request received, in order. */
  requests: FakeRequest[];
  /** Requests whose path starts with `prefix`. */
  count(prefix?: string): number;
  /** Swap the behaviour mid-test. */
  setHandler(handler: FakeHandler): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 that stands in for an external service (price venue, LLM provider,
 * webhook receiver), answering exactly what the test tells it to, and recording what it was asked.
 */
export async function startFakeServer(handler: FakeHandler): Promise<FakeServer> {
  let current = handler;
  const requests: FakeRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        url: new URL(req.url ?? '/', 'http://fake'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      try {
        const answer = await current(request);
        if (answer.hang) return;
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        if (res.destroyed) return;
        const isText = typeof answer.body === 'string';
        res.writeHead(answer.status ?? 200, {
          'content-type': isText ? 'text/plain' : 'application/json',
          ...answer.headers,
        });
        res.end(
          answer.body === undefined ? '' : isText ? (answer.body as string) : JSON.stringify(answer.body),
        );
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake server handler failed: ${(err as Error).message}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (prefix = '/') => requests.filter((r) => r.url.pathname.startsWith(prefix)).length,
    setHandler(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
