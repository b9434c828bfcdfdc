import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { question, testQueue } from '../../test/ai/helpers.js';
import type { TestAccount, TestContext } from '../../test/helpers/context.js';
import {
  createSibylClient,
  SibylApiError,
  type SibylClient,
  SibylTimeoutError,
  unwrap,
  WebhookInbox,
} from '../src/index.js';
import { recordingSleep, startService } from './helpers.js';

// waitForResolution against the real service; the AI worker is drained by hand while the client
// "sleeps", and the client's clock is the test's: no real 5-second waits.
let ctx: TestContext;
let baseUrl: string;
let account: TestAccount;
let queue: ReturnType<typeof testQueue>;

beforeAll(async () => {
  ({ ctx, baseUrl } = await startService());
  account = await ctx.createAccount({ balanceUsd: '5.00' });
  queue = testQueue(ctx);
});
afterAll(async () => {
  await ctx.close();
});

async function submit(sibyl: SibylClient, context?: string): Promise<string> {
  const body = question(context === undefined ? {} : { context });
  const submitted = await unwrap(sibyl.POST('/api/v1/ai/resolve', { body }));
  expect(submitted.status).toBe('processing');
  return submitted.requestId;
}

describe('waitForResolution', () => {
  it('polls every 5 seconds until the request is COMPLETED, and returns the record', async () => {
    const polls: string[] = [];
    const { sleep, waits } = recordingSleep(async () => {
      // The worker gets to it during the client's second wait.
      if (waits.length === 2) await queue.drain();
    });
    const sibyl = createSibylClient({
      baseUrl,
      apiKey: account.key,
      sleep,
      fetch: async (request) => {
        if (request.method === 'GET') polls.push(new URL(request.url).pathname);
        return globalThis.fetch(request);
      },
    });
    const requestId = await submit(sibyl);
    const record = await sibyl.waitForResolution(requestId);
    expect(record.status).toBe('COMPLETED');
    expect(record.result?.requestId).toBe(requestId);
    expect(record.result?.canDetermine).toBe(true);
    expect(waits).toEqual([5000, 5000]);
    expect(polls).toEqual(Array(3).fill(`/api/v1/ai/request/${requestId}`));
  });

  it('returns a FAILED record (refunded) as final too', async () => {
    const { sleep, waits } = recordingSleep(() => queue.drain().then(() => undefined));
    const sibyl = createSibylClient({ baseUrl, apiKey: account.key, sleep });
    const requestId = await submit(sibyl, '[sandbox:votes=0,0,x,x]');
    const record = await sibyl.waitForResolution(requestId, { intervalMs: 7000 });
    expect(record.status).toBe('FAILED');
    expect(record.refundUsd).toBe('0.25');
    expect(waits).toEqual([7000]);
  });

  it('never polls faster than every 5 seconds', async () => {
    const sibyl = createSibylClient({ baseUrl, apiKey: account.key });
    await expect(sibyl.waitForResolution('req_any', { intervalMs: 1000 })).rejects.toThrow(RangeError);
  });

  it('gives up after timeoutMs with a SibylTimeoutError, by the client clock', async () => {
    let now = 1_000_000;
    const { sleep, waits } = recordingSleep((ms) => {
      now += ms;
    });
    const sibyl = createSibylClient({ baseUrl, apiKey: account.key, sleep, now: () => now });
    const requestId = await submit(sibyl);
    const failure = await sibyl.waitForResolution(requestId, { timeoutMs: 12_000 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SibylTimeoutError);
    expect(failure).toMatchObject({ requestId, lastStatus: 'PENDING' });
    expect(waits).toEqual([5000, 5000, 2000]);
    await queue.drain();
  });

  it('reads the record as soon as its callback reaches the inbox, without waiting for the next poll', async () => {
    const inbox = new WebhookInbox();
    const waits: number[] = [];
    let asleep: () => void = () => {};
    const sleeping = new Promise<void>((resolve) => {
      asleep = resolve;
    });
    // A sleep that only an abort ends: without the inbox the wait would never finish.
    const sleep = (ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        waits.push(ms);
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        asleep();
      });
    const sibyl = createSibylClient({ baseUrl, apiKey: account.key, sleep });
    const requestId = await submit(sibyl);
    const waiting = sibyl.waitForResolution(requestId, { webhooks: inbox });
    await sleeping;
    await queue.drain();
    inbox.deliver({ requestId: 'req_someone_else' });
    inbox.deliver({ requestId });
    const record = await waiting;
    expect(record.status).toBe('COMPLETED');
    expect(waits).toEqual([5000]);
  });

  it('stops when its signal aborts, and throws the API error of an unknown request', async () => {
    const controller = new AbortController();
    const { sleep } = recordingSleep(() => controller.abort(new Error('enough')));
    const sibyl = createSibylClient({ baseUrl, apiKey: account.key, sleep });
    const requestId = await submit(sibyl);
    await expect(sibyl.waitForResolution(requestId, { signal: controller.signal })).rejects.toThrow('enough');
    await queue.drain();

    const unknown = await sibyl.waitForResolution('req_unknown00000000000000').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(SibylApiError);
    expect(unknown).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
