import { promises as dns, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
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

  return {
    async send(req: WebhookRequest): Promise<WebhookOutcome> {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      const refused = refusal(req.url, options.allowPrivateTargets);
      if (refused) return { kind: 'error', ...refused, latencyMs: 0 };
      try {
        // request() never follows redirects: a 3xx comes back as an answer like any other.
        const res = await request(req.url, {
          dispatcher: agent,
          method: 'POST',
          headers: req.headers,
          body: req.body,
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        const preview = await readCapped(res.body, options.maxResponseBytes);
        return { kind: 'response', statusCode: res.statusCode, latencyMs: latency(), bodyPreview: preview };
      } catch (err) {
        const code = classify(err);
        return { kind: 'error', code, message: MESSAGES[code], latencyMs: latency() };
      }
    },
    close: () => agent.close(),
  };
}

/** Checks made before connecting: the scheme, and a host written as an IP address. */
function refusal(url: string, allowPrivate: boolean): { code: WebhookErrorCode; message: string } | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { code: 'connection', message: 'The callback URL is not a valid URL' };
  }
  if (parsed.protocol !== 'https:' && !plainHttpAllowed(parsed, { allowPrivateTargets: allowPrivate }))
    return { code: 'connection', message: 'Callbacks are sent over HTTPS only' };
  // The same classifier as at submit: a non-public IP literal, a localhost or other special-use name
  // is never connected to (with private targets allowed, `.invalid` still: it resolves nowhere).
  if (blockedHostReason(parsed.hostname, allowPrivate) !== null) {
    return { code: 'blocked_address', message: MESSAGES.blocked_address };
  }
  return null;
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

async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  max: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= max) {
      body.destroy(); // the rest is never read: the connection is dropped
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, Math.min(size, max)).toString('utf8').slice(0, PREVIEW_CHARS);
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
