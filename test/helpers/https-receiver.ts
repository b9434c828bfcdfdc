import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { createGuardedTransport } from '../../src/webhooks/transport.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';

export interface TestCertificate {
  cert: string;
  key: string;
}

let certificate: Promise<TestCertificate> | undefined;

/** One self-signed certificate per test process, for localhost, 127.0.0.1 and ::1. */
export function testCertificate(): Promise<TestCertificate> {
  certificate ??= generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  }).then((pems) => ({ cert: pems.cert, key: pems.private }));
  return certificate;
}

/**
 * The service's guarded transport as a test deployment sets it up to reach a receiver on loopback:
 * private targets allowed, the test certificate trusted, answers up to 64 KiB. `timeoutMs` far above
 * a local answer however loaded the machine.
 */
export async function loopbackTransport(timeoutMs = 4000): Promise<WebhookTransport> {
  return createGuardedTransport({
    allowPrivateTargets: true,
    timeoutMs,
    maxResponseBytes: 65_536,
    ca: (await testCertificate()).cert,
  });
}

export interface ReceivedWebhook {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver does with a request: answer a status, or take over the response. */
export type ReceiverHandler = (
  request: ReceivedWebhook,
  response: ServerResponse,
) => number | { status: number; body?: string; headers?: Record<string, string> } | 'handled';

export interface HttpsReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** TCP connections accepted (TLS or not). */
  connections(): number;
  setHandler(handler: ReceiverHandler): void;
  close(): Promise<void>;
}

/** A real HTTPS webhook receiver on loopback that records every request with its raw body. */
export async function startHttpsReceiver(handler: ReceiverHandler = () => 200): Promise<HttpsReceiver> {
  const { cert, key } = await testCertificate();
  let current = handler;
  let connections = 0;
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const answer = current(request, res);
      if (answer === 'handled') return;
      const { status, body, headers } = typeof answer === 'number' ? { status: answer } : answer;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers });
      res.end(body ?? 'ok');
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    received,
    connections: () => connections,
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
