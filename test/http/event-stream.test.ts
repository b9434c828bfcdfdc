import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStream } from '../helpers/event-stream.js';
import { eventually, type Probe, type StreamApp, startStreamApp } from './event-stream-fixture.js';

/**
 * The event-stream mechanism (src/http/event-stream/, docs/architecture.md#event-streams) that every
 * stream route opens its streams with: ids and resume, the keep-alive after 15 s of silence, the
 * bounded send queue, per-minute metering, the first `stream` event, shutdown. Its limits are in
 * event-stream-limits.test.ts.
 */

let server: StreamApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(options: Parameters<typeof startStreamApp>[0] = {}): Promise<StreamApp> {
  server = await startStreamApp(options);
  return server;
}

/** The probe of the n-th stream opened, once its source has started. */
async function probeOf(app: StreamApp, n: number): Promise<Probe & { sink: NonNullable<Probe['sink']> }> {
  await eventually(() => app.probes[n]?.sink !== undefined);
  return app.probes[n] as Probe & { sink: NonNullable<Probe['sink']> };
}

/** A client that sends the request and then reads nothing: the kernel's buffers fill, then the server's. */
async function stalledClient(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.pause();
  socket.write('GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return socket;
}

const KIB_64 = 'x'.repeat(64 * 1024);

describe('an event stream', () => {
  it('sends retry first, then events with their ids; a Last-Event-ID reaches the source, which replays', async () => {
    const app = await start();
    const client = await openEventStream(app.url(), { 'last-event-id': 'evt_41' });
    expect(client.response.status).toBe(200);
    expect(client.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const probe = await probeOf(app, 0);
    expect(probe.lastEventId).toBe('evt_41');
    probe.sink.send({ event: 'tick', id: 'evt_42', data: { n: 42 } });
    await client.until(() => client.events.length >= 2);
    expect(client.retries).toEqual([2000]);
    expect(client.events).toEqual([
      { event: 'replay', id: 'r_1', data: { after: 'evt_41' } },
      { event: 'tick', id: 'evt_42', data: { n: 42 } },
    ]);
    await client.close();
    await eventually(() => probe.stopped);
    expect(app.streams.size).toBe(0);
  });

  it('sends a comment line after 15 s without any other line, and not while events flow', async () => {
    const app = await start();
    const client = await openEventStream(app.url());
    const probe = await probeOf(app, 0);
    // An event after each look: had a look written a comment, it would arrive before that event.
    const markAfterLook = async (n: number) => {
      await app.streams.sweep();
      probe.sink.send({ event: 'mark', id: `m_${n}`, data: n });
      await client.until(() => client.events.length >= n);
    };
    app.clock.advance(14_999);
    await markAfterLook(1);
    app.clock.advance(10_000);
    await markAfterLook(2);
    app.clock.advance(10_000);
    await markAfterLook(3);
    expect(client.comments).toEqual([]);
    app.clock.advance(15_000);
    await app.streams.sweep();
    await client.until(() => client.comments.length >= 1);
    expect(client.comments).toEqual(['keep-alive']);
    await client.close();
  });

  it('a client that stops reading: past 1 MiB unsent it is closed and its connection let go', async () => {
    const app = await start({ bounds: { closeGraceMs: 50 } });
    const socket = await stalledClient(app.port);
    const probe = await probeOf(app, 0);
    let most = 0;
    let sent = 0;
    while (!probe.stopped) {
      most = Math.max(most, probe.sink.backlogBytes);
      probe.sink.send({ event: 'bulk', id: `b_${sent++}`, data: KIB_64 });
      // Lets the socket hand what the kernel takes to the kernel.
      await new Promise((r) => setImmediate(r));
    }
    // Bounded by the limit and one event, whatever the kernel took before the buffer grew.
    expect(most).toBeLessThanOrEqual(1024 * 1024);
    expect(sent).toBeGreaterThan(16);
    expect(app.streams.size).toBe(0);
    // The bytes the client never read are let go with the connection (after a short grace).
    await eventually(() => probe.socket.destroyed);
    socket.destroy();
  });

  it('a slow client that reads on finds SLOW_CONSUMER as the last event', async () => {
    const app = await start({ bounds: { closeGraceMs: 30_000 } });
    const socket = await stalledClient(app.port);
    const probe = await probeOf(app, 0);
    let sent = 0;
    while (!probe.stopped) {
      probe.sink.send({ event: 'bulk', id: `b_${sent++}`, data: KIB_64 });
      await new Promise((r) => setImmediate(r));
    }
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.resume();
    // Up to the end of the chunked body (the connection itself may stay open for another request).
    await eventually(() => text.endsWith('\r\n0\r\n\r\n'));
    socket.destroy();
    // The last event before the end of the chunked body.
    const field = 'event: error\ndata: ';
    const at = text.lastIndexOf(field);
    expect(at).toBeGreaterThan(0);
    expect(text.slice(text.indexOf('\n\n', at))).toBe('\n\n\r\n0\r\n\r\n');
    expect(JSON.parse(text.slice(at + field.length, text.indexOf('\n', at + field.length)))).toEqual({
      error: 'The client reads too slowly (over 1 MiB unsent); reconnect, and read events as they come',
      code: 'SLOW_CONSUMER',
      requestId: probe.requestId,
    });
  });

  it('unsent data 30 s old: the client is too slow, whatever its amount', async () => {
    const app = await start({ bounds: { closeGraceMs: 50 } });
    const socket = await stalledClient(app.port);
    const probe = await probeOf(app, 0);
    // Until the kernel's buffers are full and the server holds some of it.
    for (let i = 0; probe.sink.backlogBytes === 0; i++) {
      probe.sink.send({ event: 'bulk', id: `b_${i}`, data: KIB_64 });
      await new Promise((r) => setImmediate(r));
    }
    expect(probe.sink.backlogBytes).toBeLessThan(1024 * 1024);
    app.clock.advance(29_999);
    await app.streams.sweep();
    expect(probe.stopped).toBe(false);
    app.clock.advance(1);
    await app.streams.sweep();
    expect(probe.stopped).toBe(true);
    await eventually(() => probe.socket.destroyed);
    socket.destroy();
  });

  it('a source that fails once started ends the stream with INTERNAL_ERROR; one refusing first is the answer', async () => {
    const app = await start();
    const broken = await openEventStream(app.url('?fail=start'));
    await broken.finished();
    expect(broken.events).toEqual([
      {
        event: 'error',
        id: undefined,
        data: {
          error: 'The stream failed; reconnect',
          code: 'INTERNAL_ERROR',
          requestId: broken.response.headers.get('x-request-id'),
        },
      },
    ]);
    const refused = await fetch(app.url('?fail=source'));
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ code: 'NOT_FOUND', error: 'No such thing to stream' });
    expect(app.streams.size).toBe(0);
  });
});

describe('metering', () => {
  it('the first minute is paid before the answer starts: a refusal is the HTTP answer, nothing opened', async () => {
    const app = await start();
    const refused = await fetch(app.url('?meter=1&refuseAt=0'));
    expect(refused.status).toBe(402);
    expect(await refused.json()).toMatchObject({
      code: 'INSUFFICIENT_BALANCE',
      error: 'The balance cannot pay minute 0',
    });
    expect(app.meterCalls.map((call) => call.minute)).toEqual([0]);
    expect(app.probes[0]?.stopped).toBe(true);
    // Its slots went back: the key's two streams still open.
    const a = await openEventStream(app.url());
    const b = await openEventStream(app.url());
    expect([a.response.status, b.response.status]).toEqual([200, 200]);
    await a.close();
    await b.close();
  });

  it('each minute is paid at its start; a refused one ends the stream with INSUFFICIENT_BALANCE', async () => {
    const app = await start();
    const opened = app.clock.now().getTime();
    const client = await openEventStream(app.url('?meter=1&refuseAt=4'));
    await probeOf(app, 0);
    app.clock.advance(59_999);
    await app.streams.sweep();
    app.clock.advance(1);
    await app.streams.sweep();
    await eventually(() => app.meterCalls.length === 2);
    // The keep-alive that look wrote reaches the network before the clock moves on.
    await new Promise((r) => setImmediate(r));
    // A process held up for three minutes pays each of them, in order, then the refusal ends it.
    app.clock.advance(180_000);
    await app.streams.sweep();
    await client.finished();
    expect(app.meterCalls.map((call) => [call.minute, call.startsAt.getTime() - opened])).toEqual([
      [0, 0],
      [1, 60_000],
      [2, 120_000],
      [3, 180_000],
      [4, 240_000],
    ]);
    expect(client.events.at(-1)).toEqual({
      event: 'error',
      id: undefined,
      data: {
        error: 'The balance cannot pay minute 4',
        code: 'INSUFFICIENT_BALANCE',
        requestId: client.response.headers.get('x-request-id'),
      },
    });
    expect(app.probes[0]?.stopped).toBe(true);
  });

  it('the first event states the price of a minute and the limits, without an id', async () => {
    const app = await start();
    const client = await openEventStream(app.url('?meter=1&announce=1'));
    await client.until(() => client.events.length >= 1);
    expect(client.events[0]).toEqual({
      event: 'stream',
      id: undefined,
      data: {
        requestId: client.response.headers.get('x-request-id'),
        minuteUsd: '0.002',
        limits: { perKey: 2, perAccount: 3, perAddress: 4, perProcess: 6, symbols: 50 },
      },
    });
    await client.close();
  });
});

describe('shutdown', () => {
  it('every stream gets SHUTTING_DOWN and ends; a stream asked for meanwhile is refused (503)', async () => {
    const app = await start();
    const clients = [await openEventStream(app.url()), await openEventStream(app.url('?key=key_2'))];
    await probeOf(app, 1);
    await app.streams.close();
    for (const client of clients) {
      await client.finished();
      expect(client.events).toEqual([
        {
          event: 'error',
          id: undefined,
          data: {
            error: 'This server is shutting down; reconnect (another instance will answer)',
            code: 'SHUTTING_DOWN',
            requestId: client.response.headers.get('x-request-id'),
          },
        },
      ]);
    }
    const late = await fetch(app.url('?key=key_3'));
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('5');
    expect(await late.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
