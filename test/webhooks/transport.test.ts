import { createServer as createHttpServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer, type Server } from 'node:net';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedTransport } from '../../src/webhooks/transport.js';
import type { WebhookTransport } from '../../src/webhooks/transport-port.js';
import { type HttpsReceiver, startHttpsReceiver, testCertificate } from '../helpers/https-receiver.js';

const MAX = 64 * 1024;
let receiver: HttpsReceiver;
let transport: WebhookTransport;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  transport = createGuardedTransport({
    allowPrivateTargets: true,
    // Far above a local answer however loaded the machine; the timeout case uses its own transport.
    timeoutMs: 10_000,
    maxResponseBytes: MAX,
    ca: (await testCertificate()).cert,
  });
});
afterAll(async () => {
  await transport.close();
  await receiver.close();
});

const send = (url: string, t = transport) =>
  t.send({ url, body: '{"ok":true}', headers: { 'content-type': 'application/json' } });

describe('the webhook transport, against real HTTPS receivers on loopback', () => {
  it('posts the body and headers as given and reports the answer', async () => {
    receiver.setHandler(() => ({ status: 201, body: 'thanks' }));
    const outcome = await send(`${receiver.url}/hook`);
    expect(outcome).toMatchObject({ kind: 'response', statusCode: 201, bodyPreview: 'thanks' });
    const last = receiver.received.at(-1);
    expect(last?.body).toBe('{"ok":true}');
    expect(last?.headers['content-type']).toBe('application/json');
  });

  it('never follows a redirect: a 302 is an answer, and its target sees nothing', async () => {
    const target = await startHttpsReceiver();
    receiver.setHandler(() => ({ status: 302, headers: { location: `${target.url}/elsewhere` } }));
    const outcome = await send(`${receiver.url}/hook`);
    expect(outcome).toMatchObject({ kind: 'response', statusCode: 302 });
    expect(target.connections()).toBe(0);
    await target.close();
  });

  it('a receiver that does not answer in time is a timeout', async () => {
    receiver.setHandler(() => 'handled'); // never answers
    const impatient = createGuardedTransport({
      allowPrivateTargets: true,
      timeoutMs: 300,
      maxResponseBytes: MAX,
      ca: (await testCertificate()).cert,
    });
    const outcome = await send(`${receiver.url}/slow`, impatient);
    expect(outcome).toMatchObject({ kind: 'error', code: 'timeout' });
    await impatient.close();
  });

  it('an attempt waiting for a pooled connection ends at its deadline as a timeout, like the ones sent', async () => {
    receiver.setHandler(() => 'handled'); // never answers: every connection stays busy
    const impatient = createGuardedTransport({
      allowPrivateTargets: true,
      timeoutMs: 300,
      maxResponseBytes: MAX,
      ca: (await testCertificate()).cert,
    });
    // 20 attempts to one origin, 16 connections: 4 wait for one. How many of the waiting ones a
    // freed connection still carries before their own deadline depends on the machine's load (a
    // fixed count failed a loaded CI run), so the case asserts what holds at any speed: each of the
    // 20 ends as a timeout, none hangs past it or reports a connection error.
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () => send(`${receiver.url}/queued`, impatient)),
    );
    for (const outcome of outcomes) expect(outcome).toMatchObject({ kind: 'error', code: 'timeout' });
    await impatient.close();
  });

  it('reads at most 64 KiB of a 10 MiB answer, then drops the connection', async () => {
    let written = 0;
    let closedEarly = false;
    let closed: () => void = () => {};
    const connectionClosed = new Promise<void>((resolve) => {
      closed = resolve;
    });
    receiver.setHandler((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      res.on('close', () => {
        closedEarly = written < 10 * 1024 * 1024;
        closed();
      });
      const pump = () => {
        while (written < 10 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return 'handled';
    });
    const outcome = await send(`${receiver.url}/big`);
    expect(outcome).toMatchObject({ kind: 'response', statusCode: 200 });
    if (outcome.kind === 'response') expect(outcome.bodyPreview.length).toBeLessThanOrEqual(256);
    await connectionClosed;
    expect(closedEarly).toBe(true);
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });

  it('an untrusted certificate is a TLS failure; a closed port a connection failure', async () => {
    const other = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
    });
    const untrusted = createTlsServer({ cert: other.cert, key: other.private }, (_req, res) => res.end('no'));
    await new Promise<void>((r) => untrusted.listen(0, '127.0.0.1', r));
    const port = (untrusted.address() as AddressInfo).port;
    expect(await send(`https://127.0.0.1:${port}/`)).toMatchObject({ kind: 'error', code: 'tls' });
    await new Promise<void>((r) => untrusted.close(() => r()));
    expect(await send(`https://127.0.0.1:${port}/`)).toMatchObject({ kind: 'error', code: 'connection' });
  });

  it('http:// only to loopback, and only when private targets are allowed (local development)', async () => {
    const bodies: string[] = [];
    const plain = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const port = (plain.address() as AddressInfo).port;
    try {
      expect(await send(`http://127.0.0.1:${port}/hook`)).toMatchObject({
        kind: 'response',
        statusCode: 204,
      });
      expect(await send(`http://localhost:${port}/hook`)).toMatchObject({
        kind: 'response',
        statusCode: 204,
      });
      // A name under localhost is loopback too (RFC 6761 §6.3), answered without the system resolver
      // (which says ENOTFOUND for it on many machines).
      expect(await send(`http://app.localhost:${port}/hook`)).toMatchObject({
        kind: 'response',
        statusCode: 204,
      });
      expect(bodies).toEqual(['{"ok":true}', '{"ok":true}', '{"ok":true}']);
      // Not loopback: never plain HTTP, private targets or not.
      for (const url of ['http://10.0.0.1/', 'http://hooks.example.com/']) {
        expect(await send(url)).toMatchObject({ kind: 'error', code: 'connection' });
      }
      const guarded = createGuardedTransport({
        allowPrivateTargets: false,
        timeoutMs: 1000,
        maxResponseBytes: MAX,
      });
      expect(await send(`http://127.0.0.1:${port}/hook`, guarded)).toMatchObject({
        kind: 'error',
        code: 'connection',
      });
      await guarded.close();
      expect(bodies).toHaveLength(3);
    } finally {
      await new Promise<void>((r) => plain.close(() => r()));
    }
  });

  it('keeps connections to an origin and reuses them: the host is resolved and checked once a connection', async () => {
    const pems = await generate([{ name: 'commonName', value: 'receiver.test' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'receiver.test' }] }],
    });
    const paths: string[] = [];
    const server = createTlsServer({ cert: pems.cert, key: pems.private }, (req, res) => {
      paths.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    let connections = 0;
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    let lookups = 0;
    const pooled = createGuardedTransport({
      allowPrivateTargets: true, // the name resolves to loopback here; the check runs all the same
      timeoutMs: 10_000,
      maxResponseBytes: MAX,
      ca: pems.cert,
      resolver: async (hostname) => {
        lookups += 1;
        expect(hostname).toBe('receiver.test');
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    try {
      // Three endpoints of one origin, 20 attempts at once, three times over.
      for (let round = 0; round < 3; round++) {
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) => send(`https://receiver.test:${port}/fanout-${i % 3}`, pooled)),
        );
        for (const outcome of outcomes) expect(outcome).toMatchObject({ kind: 'response', statusCode: 200 });
      }
      expect(paths).toHaveLength(60);
      expect(new Set(paths)).toEqual(new Set(['/fanout-0', '/fanout-1', '/fanout-2']));
      // At most 16 connections to an origin, kept between rounds; one lookup (and check) for each.
      expect(connections).toBeLessThanOrEqual(16);
      expect(lookups).toBe(connections);
    } finally {
      await pooled.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('without WEBHOOK_ALLOW_PRIVATE_TARGETS, loopback is refused before any connection', async () => {
    const canary: Server = createNetServer((socket) => socket.destroy());
    let connections = 0;
    canary.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
    const port = (canary.address() as AddressInfo).port;
    const guarded = createGuardedTransport({
      allowPrivateTargets: false,
      timeoutMs: 1000,
      maxResponseBytes: MAX,
    });
    expect(await send(`https://127.0.0.1:${port}/`, guarded)).toMatchObject({
      kind: 'error',
      code: 'blocked_address',
    });
    expect(await send(`https://localhost:${port}/`, guarded)).toMatchObject({
      kind: 'error',
      code: 'blocked_address',
    });
    expect(connections).toBe(0);
    await guarded.close();
    await new Promise<void>((r) => canary.close(() => r()));
  });
});
