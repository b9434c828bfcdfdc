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

/** The shapes the pages read (the server's schemas are the reference: /api/v1/openapi.json, tag dashboard). */
export interface AccountView {
  id: string;
  mode: Mode;
  status: 'active' | 'suspended';
  walletAddress: string | null;
  balanceUsd: string;
  createdAt: string;
}

export interface SessionView {
  wallet: string;
  accounts: Record<Mode, { id: string; status: string; balanceUsd: string }>;
  session: { createdAt: string; idleExpiresAt: string; expiresAt: string };
}

export interface UsageRow {
  group: string;
  label: string | null;
  requests: number;
  chargedUsd: string;
  refundedUsd: string;
  spendUsd: string;
}

export interface UsageReport {
  from: string;
  to: string;
  groupBy: 'day' | 'operation' | 'key';
  totals: Omit<UsageRow, 'group' | 'label'>;
  rows: UsageRow[];
}

export interface Transaction {
  id: string;
  kind: string;
  amountUsd: string;
  balanceAfterUsd: string;
  operation: string | null;
  requestId: string | null;
  keyId: string | null;
  reference: string | null;
  memo: string | null;
  createdAt: string;
}

export interface ApiKey {
  id: string;
  keyPrefix: string;
  name: string;
  permissions: string[];
  isActive: boolean;
  expiresAt?: string;
  revokedAt?: string;
  allowedIps: string[];
  allowedOrigins: string[];
  rotatedTo?: string;
  createdAt: string;
  rateLimit: { requestsPerSecond: number; burst: number; isDefault: boolean };
  quotas: Record<string, number | string | null>;
}
