import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type PriceTarget, parseTarget } from '../../../src/prices/tokens.js';
import { type FakeHandler, type FakeServer, startFakeServer } from '../../helpers/fake-server.js';

/** The parsed target for a listed symbol or a mint; a test that names something else is wrong. */
export function target(text: string): PriceTarget {
  const parsed = parseTarget(text);
  if (parsed.kind !== 'target') throw new Error(`${text} does not parse to a target`);
  return parsed.target;
}

/** A signal that never aborts, for the calls whose cancellation is not under test. */
export const signal = new AbortController().signal;

export interface VenueServer extends FakeServer {
  /** Forget what was asked so far and answer with `handler` from now on. */
  answer(handler: FakeHandler): void;
}

/**
 * The fake venue a test file talks to: a real HTTP server started before the file's tests,
 * closed after them, with its record of requests cleared before each test. It answers 500 until
 * a test says what to answer.
 */
export function useVenueServer(): VenueServer {
  let server: FakeServer | undefined;
  const current = (): FakeServer => {
    if (server === undefined) throw new Error('the fake venue is used outside a test');
    return server;
  };
  beforeAll(async () => {
    server = await startFakeServer(() => ({ status: 500, body: 'no handler' }));
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    current().requests.length = 0;
  });
  return {
    get url() {
      return current().url;
    },
    get requests() {
      return current().requests;
    },
    count: (prefix) => current().count(prefix),
    setHandler: (handler) => current().setHandler(handler),
    answer(handler) {
      current().requests.length = 0;
      current().setHandler(handler);
    },
    close: () => current().close(),
  };
}
