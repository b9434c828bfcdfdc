import pg from 'pg';

type Handler = (payload: string) => void;

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

/**
 * One dedicated PostgreSQL connection (outside the pool, which would hand it back mid-LISTEN) that
 * LISTENs on every channel the process subscribes to. A lost connection is re-opened with backoff;
 * once listening again, every handler is called with an empty payload, because notifications sent
 * while it was down are gone — the handlers re-read the database instead.
 */
export class PgListener {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  /** Each channel's LISTEN, which every listen() of the channel waits for (and fails with). */
  private readonly listening = new Map<string, Promise<unknown>>();
  private closed = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The statements sent on the connection, one after another (see `send`). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly config: pg.ClientConfig) {}

  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    assertChannel(channel);
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    try {
      const client = await this.connect();
      let listening = this.listening.get(channel);
      if (!listening) {
        const query = this.send(client, `LISTEN ${channel}`);
        listening = query;
        this.listening.set(channel, query);
        query.catch(() => {
          if (this.listening.get(channel) === query) this.listening.delete(channel);
        });
      }
      await listening;
    } catch (err) {
      // Not listening: the handler is forgotten, so it is never called (a later connection would
      // LISTEN on its channel) and the channel's next listen() LISTENs again.
      this.forget(channel, handler);
      throw err;
    }
    return async () => {
      const client = this.client;
      if (this.forget(channel, handler) && client)
        await this.send(client, `UNLISTEN ${channel}`).catch(() => {});
    };
  }

  /**
   * Sends one statement once the ones before it have finished: queues and streams subscribe and
   * unsubscribe at once (a worker stopping its queues together), and pg refuses, from 9.0, a query
   * sent while another is running on the same client (deprecated in 8.x).
   */
  private send(client: pg.Client, text: string): Promise<unknown> {
    const sent = this.queue.then(() => client.query(text));
    this.queue = sent.catch(() => {});
    return sent;
  }

  /** Removes a handler; true when it was its channel's last (the channel is then dropped). */
  private forget(channel: string, handler: Handler): boolean {
    const set = this.handlers.get(channel);
    if (!set?.delete(handler) || set.size > 0) return false;
    this.handlers.delete(channel);
    this.listening.delete(channel);
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client(this.config);
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      // A connection that could not LISTEN on every channel is not kept (nor left open).
      await client.end().catch(() => {});
      throw err;
    }
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    return client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    client.end().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.closed || this.handlers.size === 0) return;
      this.connect().then(
        () => {
          for (const set of this.handlers.values()) for (const handler of set) handler('');
        },
        () => {
          this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
          this.scheduleReconnect();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }
}

/** Channel names are spliced into LISTEN, which takes no parameters: plain identifiers only. */
export function assertChannel(channel: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`Invalid notification channel "${channel}"`);
}
