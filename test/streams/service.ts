import type { AddressInfo } from 'node:net';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { type OpenEventStream, openEventStream } from '../helpers/event-stream.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';

/**
 * The live-data streams' tests' one set-up (docs/streams.md): a test context listening on a port of
 * its own, the API's base address, and every stream a test opens, closed at the end, when the ledger
 * must still reconcile.
 */
export interface StreamService {
  ctx: TestContext;
  /** `http://127.0.0.1:<port>/api/v1`. */
  base: string;
  /** Opens `GET <base><path>` with `key` (and headers); `base` another process's, if given. */
  open(path: string, key: string, headers?: Record<string, string>, base?: string): Promise<OpenEventStream>;
  /** Closes every stream opened, checks that the ledger reconciles, closes the context. */
  close(): Promise<void>;
}

export async function startStreamService(
  options: Parameters<typeof createTestContext>[0] = {},
): Promise<StreamService> {
  const ctx = await createTestContext(options);
  await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const here = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/api/v1`;
  const clients: OpenEventStream[] = [];
  return {
    ctx,
    base: here,
    async open(path, key, headers = {}, base = here) {
      const client = await openEventStream(`${base}${path}`, { authorization: `Bearer ${key}`, ...headers });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) await client.close();
      await expectLedgerReconciles(ctx.database.db);
      await ctx.close();
    },
  };
}

/** The events named `name` a stream has received, in order. */
export const named = (client: OpenEventStream, name: string) => client.events.filter((e) => e.event === name);
