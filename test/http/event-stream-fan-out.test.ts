import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldedWakes, NotificationFanOut } from '../../src/http/event-stream/fan-out.js';
import { silentLog } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from './event-stream-fixture.js';

/**
 * What stream sources are woken with (src/http/event-stream/fan-out.ts): one LISTEN per process,
 * fanned out by the notification's payload on a real database; reads folded while one runs.
 */

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

describe('NotificationFanOut', () => {
  it('wakes the subscribers of the payload’s topic only; an empty payload wakes them all', async () => {
    const fanOut = new NotificationFanOut(database.db, 'fan_out_test', silentLog);
    const woken: string[] = [];
    const stops = [
      await fanOut.subscribe('acct_a', () => woken.push('a1')),
      await fanOut.subscribe('acct_a', () => woken.push('a2')),
      await fanOut.subscribe('acct_b', () => woken.push('b')),
    ];
    await database.db.query("SELECT pg_notify('fan_out_test', 'acct_a')");
    await eventually(() => woken.length === 2);
    await database.db.query("SELECT pg_notify('fan_out_test', 'acct_c')");
    await database.db.query("SELECT pg_notify('fan_out_test', '')");
    await eventually(() => woken.length === 5);
    expect(woken).toEqual(['a1', 'a2', 'a1', 'a2', 'b']);
    // Unsubscribed: never woken again; the others still are.
    stops[0]?.();
    await database.db.query("SELECT pg_notify('fan_out_test', 'acct_a')");
    await eventually(() => woken.length === 6);
    expect(woken.at(-1)).toBe('a2');
    for (const stop of stops) stop();
  });
});

describe('foldedWakes', () => {
  it('one read at a time: a burst of wakes during a read costs one more read, not one each', async () => {
    let reads = 0;
    let release: () => void = () => {};
    const wake = foldedWakes(
      () =>
        new Promise<void>((resolve) => {
          reads += 1;
          release = resolve;
        }),
      () => {},
    );
    wake();
    for (let i = 0; i < 10; i++) wake();
    expect(reads).toBe(1);
    release();
    await eventually(() => reads === 2);
    release();
    await new Promise((r) => setImmediate(r));
    expect(reads).toBe(2);
  });
});
