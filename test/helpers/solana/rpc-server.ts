import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { decodeBase58, isSolanaAddress } from '../../../src/lib/base58.js';
import type { ExecutedTransaction } from './chain.js';
import { type Commitment, RpcLedger } from './rpc-ledger.js';

/** A failure the next matching HTTP request meets instead of an answer. */
export type Fault =
  /** An HTTP error status (429 by default carries a JSON-RPC error body, as providers send). */
  | { kind: 'http'; status: number; headers?: Record<string, string>; body?: string }
  /** A JSON-RPC error for every call of the request, inside HTTP 200 — Solana's usual way to fail. */
  | { kind: 'rpc-error'; code: number; message: string }
  /** The connection is cut without an answer. */
  | { kind: 'drop' }
  /** No answer at all until the server closes (for client timeouts). */
  | { kind: 'hang' };

interface Call {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

const TOO_MANY_REQUESTS =
  'Too many requests for a specific RPC call, contact your app developer or support@rpcpool.com.';
const BELOW_CONFIRMED = 'Method does not support commitment below `confirmed`';

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

function configOf(params: unknown[], position: number): Record<string, unknown> {
  const config = params[position];
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new RpcError(-32602, 'Invalid params');
  return config as Record<string, unknown>;
}

function commitmentOf(config: Record<string, unknown>): Commitment {
  const value = config.commitment ?? 'finalized';
  if (value === 'confirmed' || value === 'finalized') return value;
  if (value === 'processed') throw new RpcError(-32602, BELOW_CONFIRMED);
  throw new RpcError(-32602, `Invalid params: unknown variant \`${String(value)}\``);
}

/**
 * A Solana JSON-RPC server on 127.0.0.1 answering from an RpcLedger of real executed transactions,
 * the way a validator's RPC answers (docs/deposits.md#the-rpc-client; https://solana.com/docs/rpc): the JSON-RPC 2.0 envelope
 * and batches, errors inside HTTP 200, `null` for a transaction not seen at the asked commitment,
 * `getSignaturesForAddress` newest first with `before`/`until`/`limit`. Faults (HTTP 429/5xx,
 * JSON-RPC errors, cut connections) are injected per request. Only `jsonParsed` transactions are
 * served: any other encoding gets a JSON-RPC error naming that limit of the fake.
 */
export class FakeSolanaRpc {
  readonly ledger = new RpcLedger();
  /** Every call received (a batch counts each of its calls), in order. */
  readonly calls: { method: string; params: unknown[] }[] = [];
  /** HTTP requests received. */
  httpRequests = 0;
  /**
   * Called once an answer (HTTP 200) has been handed to the OS, with the calls it answers: the
   * client has it, or will in a moment. Tests act here on what a client has just read (the crash
   * test kills a worker that has just read a chunk of transactions to credit).
   */
  onAnswered: ((calls: { method: string; params: unknown[] }[]) => void) | null = null;
  private readonly faults: { fault: Fault; method?: string }[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => this.answer(req.method ?? 'GET', Buffer.concat(chunks).toString('utf8'), res));
  });
  url = '';

  static async start(): Promise<FakeSolanaRpc> {
    const rpc = new FakeSolanaRpc();
    rpc.server.on('connection', (socket) => {
      rpc.sockets.add(socket);
      socket.on('close', () => rpc.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => rpc.server.listen(0, '127.0.0.1', resolve));
    rpc.url = `http://127.0.0.1:${(rpc.server.address() as AddressInfo).port}`;
    return rpc;
  }

  publish(tx: ExecutedTransaction, options?: { finalized?: boolean; orphaned?: boolean }): void {
    this.ledger.publish(tx, options);
  }

  /** The next `times` HTTP requests (that call `method`, when given) meet `fault`. */
  failNext(fault: Fault, times = 1, method?: string): void {
    for (let i = 0; i < times; i++) this.faults.push(method ? { fault, method } : { fault });
  }

  callsOf(method: string) {
    return this.calls.filter((c) => c.method === method);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(method: string, body: string, res: ServerResponse): void {
    this.httpRequests++;
    if (method !== 'POST') {
      res.writeHead(405, { 'content-type': 'text/plain' });
      res.end('Used HTTP Method is not allowed. POST or OPTIONS is required');
      return;
    }
    let request: unknown;
    try {
      request = JSON.parse(body);
    } catch {
      this.send(res, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      return;
    }
    const calls = Array.isArray(request) ? (request as Call[]) : [request as Call];
    const recorded: { method: string; params: unknown[] }[] = [];
    for (const call of calls) {
      if (call && typeof call === 'object' && typeof call.method === 'string') {
        recorded.push({ method: call.method, params: Array.isArray(call.params) ? call.params : [] });
      }
    }
    this.calls.push(...recorded);
    const faultAt = this.faults.findIndex(
      (f) => f.method === undefined || calls.some((c) => c && typeof c === 'object' && c.method === f.method),
    );
    const fault = faultAt >= 0 ? this.faults.splice(faultAt, 1)[0]?.fault : undefined;
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === 'http') {
      const text =
        fault.body ??
        (fault.status === 429
          ? JSON.stringify({ jsonrpc: '2.0', error: { code: 429, message: TOO_MANY_REQUESTS }, id: 1 })
          : `HTTP ${fault.status}`);
      const json = text.startsWith('{');
      res.writeHead(fault.status, {
        'content-type': json ? 'application/json' : 'text/plain',
        ...fault.headers,
      });
      res.end(text);
      return;
    }
    if (Array.isArray(request) && request.length === 0) {
      this.send(res, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
      return;
    }
    const answers = calls.map((call) => this.answerCall(call, fault));
    res.once('finish', () => this.onAnswered?.(recorded));
    this.sendRaw(res, Array.isArray(request) ? `[${answers.join(',')}]` : (answers[0] as string));
  }

  /** One call's response, as JSON text (transactions are spliced in from their cached encoding). */
  private answerCall(call: Call, fault: Fault | undefined): string {
    const validId =
      call &&
      typeof call === 'object' &&
      (typeof call.id === 'number' || typeof call.id === 'string' || call.id === null);
    const id = JSON.stringify(validId ? call.id : null);
    const error = (code: number, message: string) =>
      `{"jsonrpc":"2.0","error":${JSON.stringify({ code, message })},"id":${id}}`;
    if (
      !call ||
      typeof call !== 'object' ||
      call.jsonrpc !== '2.0' ||
      typeof call.method !== 'string' ||
      !validId
    ) {
      return error(-32600, 'Invalid request');
    }
    if (fault?.kind === 'rpc-error') return error(fault.code, fault.message);
    const params = call.params === undefined ? [] : call.params;
    if (!Array.isArray(params)) return error(-32602, 'Invalid params');
    try {
      const result = this.dispatch(call.method, params);
      return `{"jsonrpc":"2.0","result":${result},"id":${id}}`;
    } catch (err) {
      if (err instanceof RpcError) return error(err.code, err.message);
      throw err;
    }
  }

  private dispatch(method: string, params: unknown[]): string {
    switch (method) {
      case 'getSlot':
        return String(this.ledger.slot(commitmentOf(configOf(params, 0))));
      case 'getBlockTime': {
        const slot = params[0];
        if (typeof slot !== 'number') throw new RpcError(-32602, 'Invalid params');
        const time = this.ledger.blockTime(slot);
        if (time === null)
          throw new RpcError(-32009, `Slot ${slot} was skipped, or missing in long-term storage`);
        return String(time);
      }
      case 'getSignaturesForAddress':
        return this.signaturesForAddress(params);
      case 'getTransaction':
        return this.transaction(params);
      default:
        throw new RpcError(-32601, 'Method not found');
    }
  }

  private signaturesForAddress(params: unknown[]): string {
    const address = params[0];
    if (typeof address !== 'string' || !isSolanaAddress(address))
      throw new RpcError(-32602, 'Invalid param: Invalid');
    const config = configOf(params, 1);
    const commitment = commitmentOf(config);
    const limit = config.limit ?? 1000;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new RpcError(-32602, 'Invalid limit; max 1000');
    }
    for (const field of ['before', 'until'] as const) {
      const value = config[field];
      if (value !== undefined && value !== null && typeof value !== 'string')
        throw new RpcError(-32602, 'Invalid params');
    }
    const minContextSlot = config.minContextSlot;
    if (typeof minContextSlot === 'number' && minContextSlot > this.ledger.slot(commitment)) {
      throw new RpcError(-32016, 'Minimum context slot has not been reached');
    }
    const list = this.ledger.signaturesFor(address, {
      commitment,
      limit,
      ...(typeof config.before === 'string' ? { before: config.before } : {}),
      ...(typeof config.until === 'string' ? { until: config.until } : {}),
    });
    return JSON.stringify(list);
  }

  private transaction(params: unknown[]): string {
    const signature = params[0];
    if (typeof signature !== 'string' || decodeBase58(signature)?.length !== 64) {
      throw new RpcError(-32602, 'Invalid param: Invalid');
    }
    const config = typeof params[1] === 'string' ? { encoding: params[1] } : configOf(params, 1);
    const commitment = commitmentOf(config);
    if (config.encoding !== 'jsonParsed') {
      throw new RpcError(-32602, `Invalid params: the fake RPC serves only encoding "jsonParsed"`);
    }
    const found = this.ledger.transactionJson(signature, commitment);
    if (!found) return 'null';
    if (found.version === 0 && config.maxSupportedTransactionVersion === undefined) {
      throw new RpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    }
    return found.json;
  }

  private send(res: ServerResponse, body: unknown): void {
    this.sendRaw(res, JSON.stringify(body));
  }

  private sendRaw(res: ServerResponse, text: string): void {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(text);
  }
}
