import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { type Clock, systemClock } from '../lib/clock.js';
import { readCapped, retryAfterMs } from '../lib/http-response.js';
import { type RetryPolicy, retryDelayMs } from './backoff.js';
import {
  type Commitment,
  type ParsedTransaction,
  ParsedTransactionSchema,
  type SignatureInfo,
  SignatureListSchema,
  type SolanaRpc,
  SolanaRpcError,
  type UnreadableAnswer,
} from './rpc.js';

/** A batch of 100 jsonParsed transactions is about 1 MB; anything near this is not an RPC answer. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * JSON-RPC error codes that say "not now" rather than "never": block or slot not yet available,
 * node behind, minimum context slot not reached, internal error — and 429 from providers that put
 * their rate limit inside HTTP 200.
 */
const TRANSIENT_RPC_CODES = new Set([-32004, -32005, -32014, -32016, -32603, 429]);

export interface RetryEvent {
  method: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  delayMs: number;
  error: SolanaRpcError;
}

export interface SolanaRpcClientOptions extends Partial<RetryPolicy> {
  url: string;
  timeoutMs: number;
  maxAttempts: number;
  /** getTransaction calls per JSON-RPC batch (1: no batch arrays, for providers without them). */
  batchSize: number;
  clock?: Clock;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Called before each retry: the wiring counts retries and rate limits for its metrics here. */
  onRetry?: (event: RetryEvent) => void;
}

interface Call {
  method: string;
  params: unknown[];
  schema: ReturnType<typeof Compile>;
  /** A result outside the schema is this call's answer, not the request's failure (a transaction's). */
  unreadable?: true;
}

const signatureList = Compile(SignatureListSchema);
const transactionOrNull = Compile({ anyOf: [ParsedTransactionSchema, { type: 'null' }] } as TSchema);
const slotNumber = Compile({ type: 'integer', minimum: 0 } as TSchema);

export function isRetryable(error: SolanaRpcError): boolean {
  switch (error.kind) {
    case 'rate_limited':
    case 'timeout':
    case 'network':
      return true;
    case 'http_error':
      return (error.details.status ?? 0) >= 500;
    case 'rpc_error':
      return TRANSIENT_RPC_CODES.has(error.details.code ?? 0);
    default:
      return false;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The Solana JSON-RPC adapter: fetch with a timeout per attempt; HTTP 429, 5xx, timeouts, cut
 * connections and transient JSON-RPC errors retried with exponential backoff and full jitter,
 * never sooner than a Retry-After; every result checked against its schema. Error messages never
 * carry the URL (providers put API keys in it).
 */
export function createSolanaRpcClient(options: SolanaRpcClientOptions): SolanaRpc {
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const policy: RetryPolicy = {
    baseDelayMs: options.baseDelayMs ?? 250,
    maxDelayMs: options.maxDelayMs ?? 10_000,
  };
  let nextId = 1;

  /** One HTTP request carrying `calls` (a batch array when there are several); results in order. */
  async function post(calls: Call[]): Promise<unknown[]> {
    const ids = calls.map(() => nextId++);
    const requests = calls.map((c, i) => ({
      jsonrpc: '2.0',
      id: ids[i],
      method: c.method,
      params: c.params,
    }));
    const method =
      calls.length === 1 ? (calls[0] as Call).method : `${(calls[0] as Call).method} ×${calls.length}`;
    const timeout = AbortSignal.timeout(options.timeoutMs);
    let text: string;
    let response: Response;
    try {
      response = await fetch(options.url, {
        method: 'POST',
        signal: timeout,
        redirect: 'error',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(calls.length === 1 ? requests[0] : requests),
      });
      text = await readCapped(
        response,
        MAX_BODY_BYTES,
        () => new SolanaRpcError('bad_response', `response larger than ${MAX_BODY_BYTES} bytes`),
      );
    } catch (err) {
      if (err instanceof SolanaRpcError) throw err;
      if (timeout.aborted)
        throw new SolanaRpcError('timeout', `no answer within ${options.timeoutMs} ms`, { method });
      throw new SolanaRpcError('network', `connection failed: ${(err as Error).message}`, { method });
    }
    const status = response.status;
    if (status === 429) {
      const wait = retryAfterMs(response.headers, clock.now().getTime());
      throw new SolanaRpcError('rate_limited', 'HTTP 429', {
        method,
        status,
        ...(wait !== undefined ? { retryAfterMs: wait } : {}),
      });
    }
    if (status < 200 || status >= 300)
      throw new SolanaRpcError('http_error', `HTTP ${status}`, { method, status });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new SolanaRpcError('bad_response', 'body is not JSON', { method });
    }
    const answers = Array.isArray(body) ? body : [body];
    return calls.map((call, i) => {
      const answer =
        answers.find((a) => isRecord(a) && a.id === ids[i]) ?? (answers.length === 1 ? answers[0] : null);
      if (!isRecord(answer))
        throw new SolanaRpcError('bad_response', 'no JSON-RPC answer for a call', { method });
      if (isRecord(answer.error)) {
        const code = typeof answer.error.code === 'number' ? answer.error.code : 0;
        const message = typeof answer.error.message === 'string' ? answer.error.message : 'unknown error';
        throw new SolanaRpcError('rpc_error', `JSON-RPC error ${code}: ${message}`, {
          method: call.method,
          code,
        });
      }
      if (!('result' in answer))
        throw new SolanaRpcError('bad_response', 'no result', { method: call.method });
      if (!call.schema.Check(answer.result)) {
        const first = [...call.schema.Errors(answer.result)][0];
        const where = first ? `${first.instancePath || '/'} ${first.message}` : 'unexpected shape';
        if (call.unreadable)
          return { unreadable: `result does not match: ${where}` } satisfies UnreadableAnswer;
        throw new SolanaRpcError('bad_response', `result does not match: ${where}`, { method: call.method });
      }
      return answer.result;
    });
  }

  async function withRetries(calls: Call[]): Promise<unknown[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await post(calls);
      } catch (err) {
        const error =
          err instanceof SolanaRpcError ? err : new SolanaRpcError('bad_response', (err as Error).message);
        if (!isRetryable(error) || attempt >= options.maxAttempts) throw error;
        const delayMs = retryDelayMs(policy, attempt, random(), error.details.retryAfterMs);
        options.onRetry?.({ method: (calls[0] as Call).method, attempt, delayMs, error });
        await sleep(delayMs);
      }
    }
  }

  return {
    async getSignaturesForAddress(address, o) {
      const config: Record<string, unknown> = { commitment: o.commitment, limit: o.limit };
      if (o.before !== undefined) config.before = o.before;
      if (o.until !== undefined) config.until = o.until;
      const [list] = await withRetries([
        { method: 'getSignaturesForAddress', params: [address, config], schema: signatureList },
      ]);
      return list as SignatureInfo[];
    },

    async getTransactions(signatures: string[], commitment: Commitment) {
      const out: (ParsedTransaction | UnreadableAnswer | null)[] = [];
      for (let at = 0; at < signatures.length; at += options.batchSize) {
        const calls = signatures.slice(at, at + options.batchSize).map((signature) => ({
          method: 'getTransaction',
          params: [signature, { encoding: 'jsonParsed', commitment, maxSupportedTransactionVersion: 0 }],
          schema: transactionOrNull,
          unreadable: true as const,
        }));
        out.push(...((await withRetries(calls)) as (ParsedTransaction | UnreadableAnswer | null)[]));
      }
      return out;
    },

    async getSlot(commitment: Commitment) {
      const [slot] = await withRetries([{ method: 'getSlot', params: [{ commitment }], schema: slotNumber }]);
      return slot as number;
    },
  };
}
