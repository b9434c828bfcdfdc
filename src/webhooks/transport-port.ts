/**
 * How a signed webhook leaves the service: one HTTP POST, one outcome. The delivery worker decides
 * what an outcome means (delivered, retry, stop); the transport only sends and measures.
 */
export interface WebhookRequest {
  /** The callback URL, already validated at submit time (https, ≤ 2,048 characters, no userinfo). */
  url: string;
  /** The exact bytes that were signed. */
  body: string;
  headers: Record<string, string>;
}

export type WebhookOutcome =
  /** The receiver answered (any status, 3xx included: redirects are never followed). */
  | { kind: 'response'; statusCode: number; latencyMs: number; bodyPreview: string }
  /**
   * No answer: `code` is one of `timeout`, `blocked_address` (the address connected to is not a
   * public one), `dns`, `tls`, `connection`; `message` is short and safe to show the account.
   */
  | { kind: 'error'; code: WebhookErrorCode; message: string; latencyMs: number };

/** `endpoint_deleted`: no attempt was made, the delivery's endpoint is gone (never sent by a transport). */
export type WebhookErrorCode =
  | 'timeout'
  | 'blocked_address'
  | 'dns'
  | 'tls'
  | 'connection'
  | 'endpoint_deleted';

export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookOutcome>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}
