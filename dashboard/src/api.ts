import type { operations } from '../../client/src/schema';

/** The dashboard's JSON endpoints (/dashboard/api), authenticated by the session cookie. */

export type Mode = 'live' | 'sandbox';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Called when the session has ended (401 SESSION_EXPIRED): the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/dashboard/api${path}`, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const payload = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok) {
    const error = new ApiError(
      response.status,
      String(payload.code ?? 'INTERNAL_ERROR'),
      String(payload.error ?? response.statusText),
      payload.details as Record<string, unknown> | undefined,
    );
    if (error.code === 'SESSION_EXPIRED') onSignedOut();
    throw error;
  }
  return payload as T;
}

/** `/{mode}/…`: an endpoint of the wallet's live or sandbox account. */
export function modeApi<T>(mode: Mode, method: string, path: string, body?: unknown): Promise<T> {
  return api<T>(method, `/${mode}${path}`, body);
}

export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * The JSON body of a dashboard operation's 200, from the types generated from the OpenAPI document
 * (client/src/schema.ts, `npm run client:generate`): the page reads the server's own declarations,
 * and a change of contract fails the dashboard's type check.
 */
export type Answer<Op extends keyof operations> = operations[Op] extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

export type SessionView = Answer<'dashboardGetSession'>;
export type UsageReport = Answer<'dashboardUsage'>;
export type UsageRow = UsageReport['rows'][number];
export type Transaction = Answer<'dashboardTransactions'>['transactions'][number];
export type ApiKey = Answer<'dashboardListKeys'>['keys'][number];
