import type { FastifyInstance } from 'fastify';
import { TestWallet, verifyBody } from './wallet.js';

/** Settings for dashboard tests: sign-in limits out of the way (the rate-limit test sets its own). */
export const DASHBOARD_TEST_CONFIG = { SIGN_IN_LIMIT_BURST: '1000000' };

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/** A client of one listening app, over real HTTP, as the dashboard page calls it. */
export class DashboardClient {
  /** The `sibyl_session=…` pair the last sign-in set, if any. */
  cookie: string | undefined;

  constructor(
    readonly base: string,
    readonly origin: string = base,
  ) {}

  static async listening(app: FastifyInstance): Promise<DashboardClient> {
    const address = app.server.address();
    const base =
      address && typeof address === 'object'
        ? `http://127.0.0.1:${address.port}`
        : await app.listen({ port: 0, host: '127.0.0.1' });
    return new DashboardClient(base);
  }

  async call(
    method: string,
    path: string,
    options: {
      body?: unknown;
      origin?: string | null;
      /** `Sec-Fetch-Site`; by default `same-origin` on a GET without `origin`, as a browser's page sends it. */
      site?: string | null;
      cookie?: string | null;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const origin = options.origin === undefined ? (method === 'GET' ? null : this.origin) : options.origin;
    if (origin !== null) headers.origin = origin;
    const site =
      options.site === undefined
        ? method === 'GET' && options.origin === undefined
          ? 'same-origin'
          : null
        : options.site;
    if (site !== null) headers['sec-fetch-site'] = site;
    const cookie = options.cookie === undefined ? this.cookie : options.cookie;
    if (cookie) headers.cookie = cookie;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers,
      ...(options.body === undefined
        ? {}
        : { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }),
    });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // CSV, HTML: the text is the answer.
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  /** POST /dashboard/api/auth/challenge: the stored sign-in input. */
  async challenge(address?: string): Promise<Record<string, unknown>> {
    const answer = await this.call('POST', '/dashboard/api/auth/challenge', {
      body: address === undefined ? {} : { address },
    });
    if (answer.status !== 200) throw new Error(`challenge: ${answer.status} ${answer.text}`);
    return answer.body.input as Record<string, unknown>;
  }

  /** Signs in as a `solana:signIn` wallet would; keeps the session cookie. */
  async signIn(wallet: TestWallet = new TestWallet()): Promise<{ wallet: TestWallet; answer: Answer }> {
    const input = await this.challenge();
    const answer = await this.call('POST', '/dashboard/api/auth/verify', {
      body: verifyBody(wallet.address, wallet.signIn(input)),
    });
    if (answer.status !== 200) throw new Error(`verify: ${answer.status} ${answer.text}`);
    this.cookie = sessionCookie(answer.headers);
    return { wallet, answer };
  }
}

/** The `name=value` pair of the Set-Cookie header. */
export function sessionCookie(headers: Headers): string | undefined {
  return headers.get('set-cookie')?.split(';')[0];
}
