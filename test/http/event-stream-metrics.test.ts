import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startMetricsServer } from '../../src/http/metrics-server.js';
import { openEventStream } from '../helpers/event-stream.js';
import { eventually, startStreamApp } from './event-stream-fixture.js';

let metricsServer: FastifyInstance;
let metricsUrl: string;

beforeAll(async () => {
  const started = await startMetricsServer(loadConfig({ METRICS_PORT: '0' }).metrics);
  if (!started) throw new Error('the metrics listener did not start');
  metricsServer = started;
  metricsUrl = `http://127.0.0.1:${(metricsServer.server.address() as AddressInfo).port}/metrics`;
});
afterAll(() => metricsServer.close());

/** `sibyl_event_streams_open` of one route, as /metrics answers it (0 when absent). */
async function openStreams(route: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith(`sibyl_event_streams_open{route="${route}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function until(route: string, expected: number): Promise<void> {
  let seen = await openStreams(route);
  while (seen !== expected) {
    await new Promise((r) => setTimeout(r, 20));
    seen = await openStreams(route);
  }
}

describe('the open event streams on /metrics', () => {
  it('counts the streams each route holds open: up as they open, down as they end, none refused', async () => {
    const app = await startStreamApp();
    const before = await openStreams('/stream');
    const first = await openEventStream(app.url());
    const second = await openEventStream(app.url('?key=key_2'));
    await eventually(() => app.streams.size === 2);
    expect(await openStreams('/stream')).toBe(before + 2);

    // A stream refused before it opens (its source refuses) is never counted.
    const refused = await fetch(app.url('?fail=source&key=key_3'));
    expect(refused.status).toBe(404);
    await refused.arrayBuffer();
    expect(await openStreams('/stream')).toBe(before + 2);

    await first.close();
    await until('/stream', before + 1);
    // Shutdown ends the rest.
    await app.close();
    await until('/stream', before);
    await second.close();
    expect(await openStreams('/stream')).toBe(before);
  });
});
