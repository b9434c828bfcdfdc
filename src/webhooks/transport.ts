import { promises as dns, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { blockedHostReason, isLocalhostName, isPublicAddress } from './addresses.js';
import { MAX_RESPONSE_BYTES } from './config.js';
import { plainHttpAllowed } from './port.js';
import type { WebhookErrorCode, WebhookOutcome, WebhookRequest, WebhookTransport } from './transport-port.js';

/** Resolves a host name to every address it has (injectable: tests flip answers between calls). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface TransportOptions {
  /** Development and tests only: skip the public-address rule (HTTPS stays required). */
  allowPrivateTargets: boolean;
  /** One attempt, from connecting to the last byte read. */
  timeoutMs: number;
  /** Read at most this much of the answer; the connection is dropped after. */
  maxResponseBytes: number;
  resolver?: Resolver;
  /** Extra trusted CA (tests); deployments use NODE_EXTRA_CA_CERTS. */
  ca?: string;
}

const BLOCKED = 'E_SIBYL_BLOCKED_ADDRESS';
const PREVIEW_CHARS = 256;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * The HTTP transport of webhook deliveries, guarded against SSRF on the address actually connected
 * to: host names are resolved by the connection's own `lookup`, every answer is checked and the
 * connection goes to a checked address, so no second resolution (DNS rebinding) can slip in
 * between check and connect. IP literals never reach `lookup` and are checked before the request.
 *
 * One Agent for every attempt: connections are kept alive and reused by the deliveries to the same
 * origin, each new one checked as it connects; a reused one stays to the address checked when it was
 * opened. Each attempt is one `dispatch` with a handler of its own (`Attempt`): no response stream,
 * no AbortSignal, and each URL parsed and checked once (docs/webhooks.md#operating).
 */
export function createGuardedTransport(options: TransportOptions): WebhookTransport {
  const resolver = options.resolver ?? systemResolver;
  const agent = new Agent({
    connect: {
      lookup: checkingLookup(resolver, options.allowPrivateTargets),
      timeout: options.timeoutMs,
      ...(options.ca ? { ca: options.ca } : {}),
    },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    // Receivers are many and mostly idle between callbacks: keep few sockets open for long.
    keepAliveTimeout: 4000,
    connections: 16,
  });
  const targets = targetCache(options.allowPrivateTargets);

  return {
    send(req: WebhookRequest): Promise<WebhookOutcome> {
      const target = targets(req.url);
      if ('refused' in target) return Promise.resolve({ kind: 'error', ...target.refused, latencyMs: 0 });
      return new Promise<WebhookOutcome>((resolve) => {
        // A dispatcher never follows redirects: a 3xx comes back as an answer like any other.
        agent.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers: req.headers, body: req.body },
          new Attempt(options, resolve),
        );
      });
    },
    close: () => agent.close(),
  };
}

/** Where a callback URL is sent, or why it never is. */
type Target = { origin: string; path: string } | { refused: { code: WebhookErrorCode; message: string } };

/** URLs kept parsed and checked (endpoints' and callbacks' URLs); emptied when full. */
const TARGETS_KEPT = 1024;

/** Each URL's target, worked out once: a URL always gives the same one. */
function targetCache(allowPrivate: boolean): (url: string) => Target {
  const known = new Map<string, Target>();
  return (url) => {
    let target = known.get(url);
    if (target === undefined) {
      target = toTarget(url, allowPrivate);
      if (known.size >= TARGETS_KEPT) known.clear();
      known.set(url, target);
    }
    return target;
  };
}

/** Checks made before connecting: the scheme, and a host written as an IP address. */
function toTarget(url: string, allowPrivate: boolean): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { refused: { code: 'connection', message: 'The callback URL is not a valid URL' } };
  }
  if (parsed.protocol !== 'https:' && !plainHttpAllowed(parsed, { allowPrivateTargets: allowPrivate }))
    return { refused: { code: 'connection', message: 'Callbacks are sent over HTTPS only' } };
  // The same classifier as at submit: a non-public IP literal, a localhost or other special-use name
  // is never connected to (with private targets allowed, `.invalid` still: it resolves nowhere).
  if (blockedHostReason(parsed.hostname, allowPrivate) !== null) {
    return { refused: { code: 'blocked_address', message: MESSAGES.blocked_address } };
  }
  // As undici's request() sends a URL: its origin, and its path with the query, never the fragment.
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/**
 * One attempt, as undici's dispatcher reports it: the status, at most `maxResponseBytes` of the
 * answer (then the connection is dropped), and one outcome — the answer, an error, or the deadline
 * `timeoutMs` after the attempt began (waiting for a pooled connection included), whichever is first.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private statusCode = 0;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: Pick<TransportOptions, 'timeoutMs' | 'maxResponseBytes'>,
    private readonly resolve: (outcome: WebhookOutcome) => void,
  ) {
    this.timer = setTimeout(expire, options.timeoutMs, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // The deadline passed while the request waited for a connection: it is never sent.
    if (this.settled) controller.abort(new AttemptOver());
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.statusCode = statusCode; // a 1xx is followed by the answer's own status
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size >= this.options.maxResponseBytes) {
      this.answered();
      controller.abort(new AttemptOver()); // the rest is never read: the connection is dropped
    }
  }

  onResponseEnd(): void {
    this.answered();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.failed(classify(err));
  }

  /** The deadline: the attempt is a timeout, and its request is aborted wherever it is. */
  timedOut(): void {
    this.failed('timeout');
    this.controller?.abort(new AttemptOver());
  }

  private answered(): void {
    if (this.settled) return;
    const size = Math.min(this.size, this.options.maxResponseBytes);
    const text = Buffer.concat(this.chunks, this.size).subarray(0, size).toString('utf8');
    this.settle({
      kind: 'response',
      statusCode: this.statusCode,
      latencyMs: this.latency(),
      bodyPreview: text.slice(0, PREVIEW_CHARS),
    });
  }

  private failed(code: WebhookErrorCode): void {
    if (!this.settled)
      this.settle({ kind: 'error', code, message: MESSAGES[code], latencyMs: this.latency() });
  }

  private settle(outcome: WebhookOutcome): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(outcome);
  }

  private latency(): number {
    return Math.round(performance.now() - this.started);
  }
}

function expire(attempt: Attempt): void {
  attempt.timedOut();
}

/** Why an attempt's request is aborted once its outcome is settled (never reported). */
class AttemptOver extends Error {
  constructor() {
    super('the attempt is over');
  }
}

/**
 * What a `localhost` name resolves to (RFC 6761 §6.3: "name resolution APIs and libraries SHOULD
 * … always return the IP loopback address"): answered here, since the system resolver often does
 * not (getaddrinfo answered ENOTFOUND for `app.localhost` on this project's Debian machine). Only
 * reached with private targets allowed: otherwise such a name is refused before connecting.
 */
const LOOPBACK: LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

function checkingLookup(resolver: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, opts, callback) => {
    (isLocalhostName(hostname) ? Promise.resolve(LOOPBACK) : resolver(hostname)).then(
      (addresses) => {
        if (addresses.length === 0)
          return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
        // One private answer refuses the host: no connection attempt may fall back to it.
        if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
          return callback(Object.assign(new Error('address not allowed'), { code: BLOCKED }), '');
        }
        if (opts.all) return callback(null, addresses);
        const [first] = addresses as [LookupAddress];
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

const MESSAGES: Record<WebhookErrorCode, string> = {
  timeout: 'The receiver did not answer in time',
  blocked_address: 'The callback host resolves to an address that is not public',
  dns: 'The callback host could not be resolved',
  tls: 'The TLS handshake failed (certificate not trusted or not valid for the host)',
  connection: 'The connection to the receiver failed',
  endpoint_deleted: 'The endpoint was deleted',
};

function classify(err: unknown): WebhookErrorCode {
  for (
    let e = err as { code?: unknown; name?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    depth++
  ) {
    const code = typeof e.code === 'string' ? e.code : '';
    const name = typeof e.name === 'string' ? e.name : '';
    if (code === BLOCKED) return 'blocked_address';
    if (
      name === 'TimeoutError' ||
      name === 'AbortError' ||
      code.endsWith('_TIMEOUT') ||
      code === 'UND_ERR_ABORTED'
    ) {
      return 'timeout';
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
    if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return 'tls';
    e = e.cause as typeof e;
  }
  return 'connection';
}

/** The transport of the configuration: public HTTPS receivers only (unless allowed), 64 KiB read. */
export function createTransport(settings: {
  allowPrivateTargets: boolean;
  timeoutMs: number;
}): WebhookTransport {
  return createGuardedTransport({
    allowPrivateTargets: settings.allowPrivateTargets,
    timeoutMs: settings.timeoutMs,
    maxResponseBytes: MAX_RESPONSE_BYTES,
  });
}
