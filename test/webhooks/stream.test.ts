import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { createContext, withTransaction } from '../../src/context.js';
import { webhookOutbox } from '../../src/webhooks/outbox.js';
import { createTestContext, type TestAccount, type TestContext } from '../helpers/context.js';

/**
 * docs/webhooks.md#local-development: GET /webhooks/stream sends the account's events as they are created,
 * with the bytes and headers of a delivery; `sibyl webhooks listen --forward-to URL` posts each one
 * unchanged, so a receiver on a laptop verifies it with any Standard Webhooks library.
 */

let ctx: TestContext;
let base: string;

beforeAll(async () => {
  ctx = await createTestContext({ config: { WEBHOOK_STREAMS_PER_KEY: '2' } });
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
});
let closed = false;
afterAll(async () => {
  if (!closed) await ctx.close();
});

async function enqueue(account: TestAccount, requestId: string): Promise<string> {
  const context = createContext(ctx.database.db, ctx.clock);
  return withTransaction(context, (tx) =>
    webhookOutbox.enqueueCallback(tx, {
      accountId: account.accountId,
      url: 'https://hooks.example.com/never-reached',
      type: 'price',
      status: 'completed',
      requestId,
      data: { symbol: 'SOL', vwapPrice: 142.5 },
    }),
  );
}

async function secretOf(account: TestAccount): Promise<string> {
  const response = await ctx.request(account.key, { method: 'GET', url: '/api/v1/account/webhook-secret' });
  return response.json().webhookSecret;
}

/** An open stream: its events as they come (parsed `data`), and a way to hang up. */
async function openStream(key: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const response = await fetch(`${base}/api/v1/webhooks/stream`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
    signal: abort.signal,
  });
  const events: { id: string; headers: Record<string, string>; body: string }[] = [];
  const comments: string[] = [];
  const errors: { code: string; error: string; requestId: string }[] = [];
  let text = '';
  let ended = false;
  const reading = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        let cut = text.indexOf('\n\n');
        while (cut >= 0) {
          const block = text.slice(0, cut);
          text = text.slice(cut + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (block.includes('event: webhook') && data) events.push(JSON.parse(data.slice(6)));
          if (block.includes('event: error') && data) errors.push(JSON.parse(data.slice(6)));
          for (const line of block.split('\n')) if (line.startsWith(': ')) comments.push(line.slice(2));
          cut = text.indexOf('\n\n');
        }
      }
    } catch {}
    ended = true;
  })();
  const until = async (check: () => boolean) => {
    while (!check()) {
      if (ended) throw new Error('the stream ended');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    response,
    events,
    comments,
    errors,
    until,
    ended: () => ended,
    close: async () => {
      abort.abort();
      await reading;
    },
  };
}

describe('GET /webhooks/stream', () => {
  it('streams each new event of the account once, signed exactly as a delivery; not other accounts’', async () => {
    const account = await ctx.createAccount({ permissions: ['account', 'keys'] });
    const other = await ctx.createAccount();
    const before = await enqueue(account, 'req_before'); // created before the stream opened: not streamed
    ctx.clock.advance(1000);
    const stream = await openStream(account.key);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const first = await enqueue(account, 'req_first');
    ctx.clock.advance(1000);
    await enqueue(other, 'req_other');
    const second = await enqueue(account, 'req_second');
    await stream.until(() => stream.events.length >= 2);
    expect(stream.events.map((e) => e.id)).toEqual([first, second]);
    expect(stream.events.map((e) => e.id)).not.toContain(before);

    const secret = await secretOf(account);
    for (const event of stream.events) {
      const parsed = new Webhook(secret).verify(event.body, event.headers) as Record<string, unknown>;
      expect(parsed).toMatchObject({ type: 'price', status: 'completed', data: { vwapPrice: 142.5 } });
      expect(event.headers['webhook-id']).toBe(event.id);
      expect(event.headers['content-type']).toBe('application/json');
      expect(event.body.endsWith(`,"signature":"${event.headers['x-service-signature']}"}`)).toBe(true);
    }
    await stream.close();
  });

  it('a test event (POST /webhooks/test) arrives as it is sent, with nothing else happening', async () => {
    const account = await ctx.createAccount({ permissions: ['account', 'keys'] });
    const stream = await openStream(account.key);
    await stream.until(() => stream.comments.some((c) => c.startsWith('sibyl webhook stream')));
    // A refused address: the attempt fails at once, but the event is made and streamed all the same.
    const sent = await ctx.request(account.key, {
      method: 'POST',
      url: '/api/v1/webhooks/test',
      payload: { callbackUrl: 'https://localhost/hook' },
    });
    expect(sent.statusCode).toBe(200);
    const { deliveryId } = sent.json();
    await stream.until(() => stream.events.length >= 1);
    expect(stream.events.map((e) => e.id)).toEqual([deliveryId]);
    const parsed = new Webhook(await secretOf(account)).verify(
      stream.events[0]?.body as string,
      stream.events[0]?.headers as Record<string, string>,
    );
    expect(parsed).toMatchObject({ type: 'test', status: 'completed' });
    await stream.close();
  });

  it('a burst larger than one read (250 events in one transaction) arrives whole, each once', async () => {
    const account = await ctx.createAccount({ permissions: ['account'] });
    const stream = await openStream(account.key);
    ctx.clock.advance(1000);
    const context = createContext(ctx.database.db, ctx.clock);
    const ids = await withTransaction(context, async (tx) => {
      const made: string[] = [];
      for (let i = 0; i < 250; i++) {
        made.push(
          await webhookOutbox.enqueueCallback(tx, {
            accountId: account.accountId,
            url: 'https://hooks.example.com/never-reached',
            type: 'price',
            status: 'completed',
            requestId: `req_burst_${i}`,
            data: { i },
          }),
        );
      }
      return made;
    });
    await stream.until(() => stream.events.length >= 250);
    expect(stream.events.map((e) => e.id).sort()).toEqual([...ids].sort());
    // Nothing more comes: each once.
    await enqueue(account, 'req_after_burst');
    await stream.until(() => stream.events.length >= 251);
    expect(stream.events).toHaveLength(251);
    await stream.close();
  });

  it('a client reconnecting with Last-Event-ID gets the events it missed first; an unknown id starts now', async () => {
    const account = await ctx.createAccount({ permissions: ['account'] });
    const first = await openStream(account.key);
    const seen = [await enqueue(account, 'req_seen_1')];
    ctx.clock.advance(10);
    seen.push(await enqueue(account, 'req_seen_2'));
    await first.until(() => first.events.length >= 2);
    await first.close();
    // While no stream is open.
    ctx.clock.advance(10);
    const missed = [await enqueue(account, 'req_missed_1')];
    ctx.clock.advance(10);
    missed.push(await enqueue(account, 'req_missed_2'));

    const again = await openStream(account.key, { 'last-event-id': first.events[1]?.id as string });
    expect(again.response.status).toBe(200);
    await again.until(() => again.events.length >= 2);
    expect(again.events.map((e) => e.id)).toEqual(missed);
    expect(again.comments[0]).toContain(`the events after ${seen[1]} first`);
    ctx.clock.advance(10);
    const live = await enqueue(account, 'req_live');
    await again.until(() => again.events.length >= 3);
    expect(again.events.map((e) => e.id)).toEqual([...missed, live]);
    await again.close();

    // Another account's event id, or one never sent: the stream starts now and says so.
    const other = await ctx.createAccount();
    const foreign = await enqueue(other, 'req_foreign');
    ctx.clock.advance(10);
    const fresh = await openStream(account.key, { 'last-event-id': foreign });
    await fresh.until(() => fresh.comments.length >= 1);
    expect(fresh.comments[0]).toContain(`${foreign} is not an event of this account of the last 24 hours`);
    ctx.clock.advance(10);
    const next = await enqueue(account, 'req_next');
    await fresh.until(() => fresh.events.length >= 1);
    expect(fresh.events.map((e) => e.id)).toEqual([next]);
    await fresh.close();

    const malformed = await fetch(`${base}/api/v1/webhooks/stream`, {
      headers: { authorization: `Bearer ${account.key}`, 'last-event-id': 'not an id' },
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
  });

  it('needs the `account` permission; at most WEBHOOK_STREAMS_PER_KEY streams per key (429 past it)', async () => {
    const reader = await ctx.createAccount({ permissions: ['price'] });
    const refused = await fetch(`${base}/api/v1/webhooks/stream`, {
      headers: { authorization: `Bearer ${reader.key}` },
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe('PERMISSION_DENIED');

    const account = await ctx.createAccount();
    const a = await openStream(account.key);
    const b = await openStream(account.key);
    const third = await fetch(`${base}/api/v1/webhooks/stream`, {
      headers: { authorization: `Bearer ${account.key}` },
    });
    expect(third.status).toBe(429);
    expect(await third.json()).toMatchObject({
      code: 'STREAM_LIMIT_EXCEEDED',
      details: { limit: 'perKey', max: 2, open: 2 },
    });
    await a.close();
    // A closed stream gives its place back (the server sees the hang-up).
    let again: Awaited<ReturnType<typeof openStream>> | undefined;
    while (!again) {
      const tried = await openStream(account.key);
      if (tried.response.status === 200) again = tried;
      else {
        await tried.close();
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    await b.close();
    await again.close();
  });
});

describe('sibyl webhooks listen --forward-to URL', () => {
  it('posts each event with its headers unchanged: a real receiver verifies it with standardwebhooks', async () => {
    const account = await ctx.createAccount({ permissions: ['account', 'keys'] });
    const secret = await secretOf(account);
    const received: { headers: IncomingHttpHeaders; body: string; verified: unknown }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        try {
          const verified = new Webhook(secret).verify(body, req.headers as Record<string, string>);
          received.push({ headers: req.headers, body, verified });
          res.writeHead(204).end();
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;

    const stop = new AbortController();
    let stdout = '';
    const running = runCli(['webhooks', 'listen', '--forward-to', `http://localhost:${port}/hook`], {
      env: { SIBYL_API_KEY: account.key, SIBYL_API_URL: base, LOG_LEVEL: 'silent' },
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stdout += text;
      },
      signal: stop.signal,
    });
    while (!stdout.includes('listening:')) await new Promise((r) => setTimeout(r, 20));
    const id = await enqueue(account, 'req_forwarded');
    while (!stdout.includes(`${id}  → `)) await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    expect(await running).toBe(0);
    await new Promise<void>((r) => receiver.close(() => r()));

    const [got] = received;
    expect(got?.verified).toMatchObject({ requestId: 'req_forwarded', type: 'price' });
    expect(got?.headers['webhook-id']).toBe(id);
    expect(got?.headers['user-agent']).toBe('Sibyl-Webhooks/1');
    expect(got?.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(stdout).toContain(`${id}  → 204`);
  });

  it('after a lost connection it reconnects with Last-Event-ID: an event made meanwhile is forwarded too', async () => {
    const account = await ctx.createAccount({ permissions: ['account'] });
    const forwarded: string[] = [];
    const receiver: Server = createServer((req, res) => {
      forwarded.push(String(req.headers['webhook-id']));
      req.resume().on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    // A relay between the command and the API that the test can cut.
    const live = new Set<Socket>();
    const apiPort = Number(new URL(base).port);
    const relay = createNetServer((socket) => {
      const upstream = connect(apiPort, '127.0.0.1');
      live.add(socket);
      socket.on('close', () => live.delete(socket));
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;

    const stop = new AbortController();
    let stdout = '';
    const running = runCli(
      ['webhooks', 'listen', '--forward-to', `http://localhost:${(receiver.address() as AddressInfo).port}/`],
      {
        env: { SIBYL_API_KEY: account.key, SIBYL_API_URL: relayUrl, LOG_LEVEL: 'silent' },
        stdout: (text) => {
          stdout += text;
        },
        stderr: (text) => {
          stdout += text;
        },
        signal: stop.signal,
      },
    );
    const waitFor = async (check: () => boolean) => {
      while (!check()) await new Promise((r) => setTimeout(r, 20));
    };
    await waitFor(() => stdout.includes('listening:'));
    const before = await enqueue(account, 'req_before_cut');
    await waitFor(() => forwarded.includes(before));
    for (const socket of live) socket.destroy();
    ctx.clock.advance(10);
    const meanwhile = await enqueue(account, 'req_while_cut');
    await waitFor(() => forwarded.includes(meanwhile));
    stop.abort();
    expect(await running).toBe(0);
    await new Promise<void>((r) => relay.close(() => r()));
    await new Promise<void>((r) => receiver.close(() => r()));
    expect(forwarded).toEqual([before, meanwhile]);
    expect(stdout).toMatch(/stream (ended|lost)/);
  });

  it('refuses what it cannot run: no URL, no key, a bad key (one line, exit 1 or 2)', async () => {
    const io = (env: Record<string, string>) => {
      let err = '';
      return {
        io: {
          env: { LOG_LEVEL: 'silent', ...env },
          stdout: () => {},
          stderr: (t: string) => {
            err += t;
          },
        },
        err: () => err,
      };
    };
    const noUrl = io({ SIBYL_API_KEY: 'pk_test_x' });
    expect(await runCli(['webhooks', 'listen'], noUrl.io)).toBe(2);
    expect(noUrl.err()).toContain('--forward-to URL is required');
    const noKey = io({});
    expect(await runCli(['webhooks', 'listen', '--forward-to', 'http://localhost:4000/'], noKey.io)).toBe(2);
    expect(noKey.err()).toContain('SIBYL_API_KEY');
    const badKey = io({
      SIBYL_API_KEY: 'pk_test_000000000000000000000000000000000000000',
      SIBYL_API_URL: base,
    });
    expect(await runCli(['webhooks', 'listen', '--forward-to', 'http://localhost:4000/'], badKey.io)).toBe(1);
    expect(badKey.err()).toMatch(
      /^sibyl: the stream at http:\/\/127\.0\.0\.1:\d+\/api\/v1\/webhooks\/stream answered 401 \(INVALID_API_KEY: .*\)\n$/,
    );
  });
});

describe('sibyl webhooks listen --events a,b', () => {
  it('forwards only the events of those types; an unknown type is a usage error naming it', async () => {
    const account = await ctx.createAccount({ permissions: ['account'] });
    const forwarded: string[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        forwarded.push(JSON.parse(body).requestId);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    const stop = new AbortController();
    let stdout = '';
    const io = {
      env: { SIBYL_API_KEY: account.key, SIBYL_API_URL: base, LOG_LEVEL: 'silent' },
      stdout: (text: string) => {
        stdout += text;
      },
      stderr: (text: string) => {
        stdout += text;
      },
      signal: stop.signal,
    };
    const running = runCli(
      ['webhooks', 'listen', '--forward-to', `http://localhost:${port}/`, '--events', 'ai,deposit.credited'],
      io,
    );
    while (!stdout.includes('listening:')) await new Promise((r) => setTimeout(r, 20));
    await enqueue(account, 'req_price_skipped');
    const kept = await withTransaction(createContext(ctx.database.db, ctx.clock), (tx) =>
      webhookOutbox.enqueueCallback(tx, {
        accountId: account.accountId,
        url: 'https://hooks.example.com/never-reached',
        type: 'ai',
        status: 'completed',
        requestId: 'req_ai_kept',
        data: {},
      }),
    );
    for (let i = 0; i < 500 && !stdout.includes(`${kept}  → `); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(stdout).toContain(`${kept}  → `);
    stop.abort();
    expect(await running).toBe(0);
    await new Promise<void>((r) => receiver.close(() => r()));
    // The streamed events come in order: the price callback, before, was read and skipped.
    expect(forwarded).toEqual(['req_ai_kept']);

    let usage = '';
    const unknown = await runCli(
      ['webhooks', 'listen', '--forward-to', 'http://localhost:4000/', '--events', 'ai,balance.hight'],
      { ...io, stderr: (text: string) => (usage += text), signal: new AbortController().signal },
    );
    expect(unknown).toBe(2);
    expect(usage).toContain('balance.hight');
  });
});

describe('shutdown', () => {
  it('closing the server ends every open stream, saying so (SHUTTING_DOWN)', async () => {
    const account = await ctx.createAccount();
    const stream = await openStream(account.key);
    // `sibyl webhooks listen` on the same account: it says why its stream ended.
    const stop = new AbortController();
    let printed = '';
    const listening = runCli(['webhooks', 'listen', '--forward-to', 'http://localhost:4000/'], {
      env: { SIBYL_API_KEY: account.key, SIBYL_API_URL: base, LOG_LEVEL: 'silent' },
      stdout: (text) => {
        printed += text;
      },
      stderr: (text) => {
        printed += text;
      },
      signal: stop.signal,
    });
    while (!printed.includes('listening:')) await new Promise((r) => setTimeout(r, 20));
    // The app closes (as on SIGTERM) with a stream open: it does not wait for the client to hang up.
    closed = true;
    await ctx.close();
    while (!stream.ended()) await new Promise((r) => setTimeout(r, 20));
    while (!printed.includes('stream ended')) await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    expect(await listening).toBe(0);
    expect(printed).toContain(
      'stream ended by the service (SHUTTING_DOWN: This server is shutting down; reconnect (another instance will answer)); reconnecting\n',
    );
    expect(stream.errors).toEqual([
      {
        code: 'SHUTTING_DOWN',
        error: 'This server is shutting down; reconnect (another instance will answer)',
        requestId: stream.response.headers.get('x-request-id'),
      },
    ]);
  });
});
