import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { AppError } from '../../src/errors.js';
import { registerErrorHandling } from '../../src/http/errors.js';
import { LocalStreamSlots, type StreamLimits, type StreamSlots } from '../../src/http/event-stream/slots.js';
import type { StreamBounds, StreamSink } from '../../src/http/event-stream/stream.js';
import { EventStreams } from '../../src/http/event-stream/streams.js';
import { ManualClock } from '../../src/lib/clock.js';
import { silentLog } from '../../src/logger.js';

/** One stream opened on the probe route: what its source was given and did. */
export interface Probe {
  requestId: string;
  lastEventId: string | undefined;
  sink: StreamSink | undefined;
  stopped: boolean;
  /** The server's side of the connection. */
  socket: Socket;
}

export interface MeterCall {
  requestId: string;
  minute: number;
  startsAt: Date;
}

/**
 * The event-stream mechanism on a bare Fastify app over real sockets: `GET /stream` opens a stream
 * whose source the test drives (`probes[i].sink.send(…)`). Query: `key`, `account`, `address` (the
 * owner), `meter=1` with `refuseAt=N` (a fake meter refusing minute N), `announce=1`, `fail=source`
 * (the source refuses before the start) or `fail=start` (its start throws).
 */
export async function startStreamApp(
  options: { limits?: Partial<StreamLimits>; bounds?: Partial<StreamBounds>; slots?: StreamSlots } = {},
) {
  const clock = new ManualClock(new Date());
  const limits: StreamLimits = { perKey: 2, perAccount: 3, perAddress: 4, perProcess: 6, ...options.limits };
  const streams = new EventStreams(
    {
      clock,
      log: silentLog,
      settings: { limits, heartbeatMs: 15_000 },
      slots: options.slots ?? new LocalStreamSlots(),
      accessCheckMs: 1000,
      addressOf: (request) => String(request.headers['x-test-address'] ?? '192.0.2.1'),
    },
    // The test runs each look itself, after moving its clock.
    { sweepMs: 3_600_000, ...(options.bounds ? { bounds: options.bounds } : {}) },
  );
  const probes: Probe[] = [];
  const meterCalls: MeterCall[] = [];
  const app: FastifyInstance = Fastify();
  registerErrorHandling(app);
  app.addHook('preClose', () => streams.close());
  app.get('/stream', async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const header = request.headers['last-event-id'];
    const probe: Probe = {
      requestId: request.id,
      lastEventId: typeof header === 'string' ? header : undefined,
      sink: undefined,
      stopped: false,
      socket: request.raw.socket,
    };
    const refuseAt = query.refuseAt === undefined ? Number.POSITIVE_INFINITY : Number(query.refuseAt);
    await streams.open(request, reply, {
      requestId: request.id,
      owner: { keyId: query.key ?? 'key_1', accountId: query.account ?? 'acct_1' },
      source: () => {
        if (query.fail === 'source') throw new AppError('NOT_FOUND', 'No such thing to stream');
        probes.push(probe);
        return {
          start(sink) {
            probe.sink = sink;
            if (query.fail === 'start') throw new Error('the source broke');
            // The source decides what a resume replays: here, one event naming the point.
            if (probe.lastEventId)
              sink.send({ event: 'replay', id: 'r_1', data: { after: probe.lastEventId } });
          },
          stop() {
            probe.stopped = true;
          },
        };
      },
      ...(query.meter
        ? {
            meter: {
              minuteUsd: '0.002',
              async payMinute(minute: number, startsAt: Date) {
                meterCalls.push({ requestId: request.id, minute, startsAt });
                if (minute >= refuseAt)
                  throw new AppError('INSUFFICIENT_BALANCE', `The balance cannot pay minute ${minute}`);
              },
            },
          }
        : {}),
      ...(query.announce ? { announce: { limits: { symbols: 50 } } } : {}),
    });
    return reply;
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    clock,
    streams,
    probes,
    meterCalls,
    port,
    url: (query = '') => `http://127.0.0.1:${port}/stream${query}`,
    close: () => app.close(),
  };
}

export type StreamApp = Awaited<ReturnType<typeof startStreamApp>>;

/** Waits until `check` holds (the server acts on its own time: a hang-up, a write's callback). */
export async function eventually(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}
