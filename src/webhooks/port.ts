import type { TxContext } from '../context.js';
import type { Queryable } from '../db/database.js';
import { AppError, type ValidationProblem, validationError } from '../errors.js';
import { blockedHostReason, isLoopbackHost } from './addresses.js';
import type { DeliveryView } from './delivery-view.js';

/** Where a result's callback goes: the webhook outbox (docs/webhooks.md). */
export interface CallbackOutbox {
  /** Throws VALIDATION_ERROR (naming `path`) for a URL the service will not call. */
  validateCallbackUrl(url: string, path: string): void;
  /**
   * Writes the callback's outbox row in the caller's transaction, so that it commits with the
   * result it reports or not at all. Returns the delivery id (the stable `webhook-id`).
   */
  enqueueCallback(
    tx: TxContext,
    input: {
      accountId: string;
      url: string;
      type: 'ai' | 'price' | 'test';
      status: 'completed' | 'failed';
      requestId: string;
      data: unknown;
    },
  ): Promise<string>;
  /** A delivery as its account sees it: its state and attempts; null when unknown. */
  deliveryView(db: Queryable, deliveryId: string): Promise<DeliveryView | null>;
}

export const MAX_CALLBACK_URL_CHARS = 2048;

/**
 * The callback URL's rules for a body the schema refused (a route's `bodyRules`): a `callbackUrl`
 * that is a string is checked as the route would check it, so one answer names its problem with
 * the schema's.
 */
export function callbackUrlRule(callbacks: CallbackOutbox): (body: unknown) => ValidationProblem[] {
  return (body) => {
    if (typeof body !== 'object' || body === null) return [];
    const url = (body as { callbackUrl?: unknown }).callbackUrl;
    if (typeof url !== 'string') return [];
    try {
      callbacks.validateCallbackUrl(url, 'body.callbackUrl');
      return [];
    } catch (err) {
      const problems = err instanceof AppError ? err.details?.problems : undefined;
      return Array.isArray(problems) ? (problems as ValidationProblem[]) : [];
    }
  };
}

/**
 * The callback URL rules that need no network: HTTPS only, at most 2,048 characters, no
 * user name or password, a host that parses — and, given `targets`, a host that could ever be
 * delivered to: unless private targets are allowed, an IP literal that is not public, a
 * `localhost` name or another special-use name (`.test`, `.example`, `.local`) is refused now, and
 * `.invalid` always (blockedHostReason, the classifier the delivery worker uses), rather than
 * accepted, charged and refused at every attempt. What a DNS name resolves to is
 * decided when connecting, by the delivery worker, on the address actually connected to.
 */
export function validateHttpsCallbackUrl(url: string, path: string, targets?: CallbackTargets): void {
  const problem = callbackUrlProblem(url, targets);
  if (problem) throw validationError([{ path, message: problem }]);
}

/**
 * Local development (docs/webhooks.md#local-development): with private targets allowed, plain `http://` to a loopback host.
 * Never anywhere else: a callback over the network is always HTTPS.
 */
export function plainHttpAllowed(url: URL, targets?: { allowPrivateTargets: boolean }): boolean {
  return url.protocol === 'http:' && targets?.allowPrivateTargets === true && isLoopbackHost(url.hostname);
}

/** What a deployment lets callbacks reach; `checkHost: false` skips the host rule (checked when sending). */
export interface CallbackTargets {
  allowPrivateTargets: boolean;
  checkHost?: boolean;
}

/**
 * The characters of a URI (RFC 3986: unreserved, reserved and `%`), what `format: uri` admits. The
 * URL parser alone would take far more — it drops leading and trailing spaces and control characters,
 * removes tabs and newlines anywhere, reads `\\` as `/` and turns a non-ASCII host into punycode —
 * so a callback URL is checked as sent, and is stored and delivered to as sent.
 */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;

function callbackUrlProblem(url: string, targets?: CallbackTargets): string | null {
  if (url.length > MAX_CALLBACK_URL_CHARS) return `must be at most ${MAX_CALLBACK_URL_CHARS} characters`;
  if (!URI_CHARACTERS.test(url) || BAD_PERCENT.test(url)) {
    return (
      'must be a URI as RFC 3986 writes it: printable ASCII, no spaces or control characters, other ' +
      'characters percent-encoded and an international host in punycode (xn--)'
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  const plainHttp = plainHttpAllowed(parsed, targets);
  if ((parsed.protocol !== 'https:' && !plainHttp) || !url.startsWith(plainHttp ? 'http://' : 'https://')) {
    return targets?.allowPrivateTargets
      ? 'must be an https:// URL (or http:// to this machine: localhost, *.localhost, 127.0.0.0/8, [::1])'
      : 'must be an https:// URL';
  }
  if (parsed.username !== '' || parsed.password !== '') return 'must not contain a user name or password';
  if (parsed.hostname === '') return 'has no host';
  if (targets && targets.checkHost !== false) {
    const blocked = blockedHostReason(parsed.hostname, targets.allowPrivateTargets);
    if (blocked) {
      return targets.allowPrivateTargets
        ? `host ${parsed.hostname} ${blocked} (docs/webhooks.md#where-callbacks-may-go)`
        : `host ${parsed.hostname} ${blocked}: callbacks are only sent to public addresses (docs/webhooks.md#where-callbacks-may-go)`;
    }
  }
  return null;
}
