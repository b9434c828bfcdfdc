import createClient from 'openapi-fetch';
import type { operations, paths } from '../../client/src/schema';

/**
 * The dashboard's JSON endpoints (/dashboard/api), authenticated by the session cookie, through
 * `openapi-fetch` and the types generated from the OpenAPI document (client/src/schema.ts,
 * `npm run client:generate`), as client/ calls the API: a path, method, parameter or body the server
 * does not declare fails `npm run typecheck`, and so does an answer read wrong.
 */
export const api = createClient<paths>({ credentials: 'same-origin' });

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

/** The body of a success, or the error answer thrown as an ApiError (in the one error body). */
export async function ok<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (response.ok && data !== undefined) return data;
  const body = (error ?? {}) as { error?: unknown; code?: unknown; details?: Record<string, unknown> };
  const failure = new ApiError(
    response.status,
    typeof body.code === 'string' ? body.code : 'INTERNAL_ERROR',
    typeof body.error === 'string' ? body.error : response.statusText,
    body.details,
  );
  if (failure.code === 'SESSION_EXPIRED') onSignedOut();
  throw failure;
}

/** The path parameter of every `/dashboard/api/{mode}/…` endpoint. */
export const inMode = (mode: Mode) => ({ params: { path: { mode } } });

/** The JSON body of a dashboard operation's 200, by its operationId. */
export type Answer<Op extends keyof operations> = operations[Op] extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

/** The JSON body a dashboard operation takes, by its operationId. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

export type SessionView = Answer<'dashboardGetSession'>;
export type UsageReport = Answer<'dashboardGetAccountUsage'>;
export type UsageRow = UsageReport['rows'][number];
export type Transaction = Answer<'dashboardListTransactions'>['transactions'][number];
export type ApiKey = Answer<'dashboardListKeys'>['keys'][number];
export type MarketList = Answer<'dashboardListMarkets'>;
export type MarketItem = MarketList['markets'][number];
export type MarketHistory = Answer<'dashboardGetMarketHistory'>;
export type MarketTrade = Answer<'dashboardListMarketTrades'>['trades'][number];
