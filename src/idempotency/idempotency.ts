import { hash } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { AppError, validationError } from '../errors.js';
import { canonicalJson } from '../lib/canonical-json.js';
import * as sql from './sql.js';

/** How long a request holds its key before a retry may take it over (its process presumably died). */
export const LOCK_MS = 60_000;
/** How long answers are kept for replay. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** The `Idempotency-Key` header: 1–255 printable ASCII characters, or absent. */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || !KEY_PATTERN.test(header)) {
    throw validationError([
      { path: 'header.idempotency-key', message: 'must be one value of 1 to 255 printable ASCII characters' },
    ]);
  }
  return header;
}

/** What makes two requests "the same": method, path with query, and the canonical body. */
export function fingerprint(method: string, url: string, body: unknown): string {
  // One-shot hash: a Hash object per request cost as much as hashing (CPU profile of the keyed batch).
  return hash('sha256', `${method} ${url}\n${canonicalJson(body ?? null)}`, 'hex');
}

export interface KeyScope {
  accountId: string;
  key: string;
  /** The request taking or holding the key. */
  requestId: string;
}

/** The stored answer of a key's first request, as a replay sends it. */
export type Replay = { kind: 'replay'; status: number; body: string; requestId: string };
export type Claim = { kind: 'held' } | Replay;

interface KeyRow {
  fingerprint: string;
  request_id: string;
  status: 'running' | 'done';
  locked_until: Date | null;
  response_status: number | null;
  response_body: string | null;
}

/**
 * Why a request did not get its key (see KeyClaimer and pending-answer.ts): the stored answer of
 * the same request (replay), 422 IDEMPOTENCY_KEY_REUSED for a different request, 409
 * IDEMPOTENCY_KEY_IN_USE while the first is still running (or a moment after it failed).
 */
export async function classifyHeldKey(
  db: Queryable,
  scope: KeyScope,
  print: string,
  now: Date,
): Promise<Replay> {
  const [row] = await db.query<KeyRow>(sql.FIND, [scope.accountId, scope.key]);
  return classify(row, scope, print, now);
}

/**
 * classifyHeldKey for a request that has not tried to take its key (the balance refused it first):
 * undefined when no request holds the key, so the request's own refusal is its answer.
 */
export async function heldKeyAnswer(
  db: Queryable,
  scope: KeyScope,
  print: string,
  now: Date,
): Promise<Replay | undefined> {
  const [row] = await db.query<KeyRow>(sql.FIND, [scope.accountId, scope.key]);
  return row ? classify(row, scope, print, now) : undefined;
}

function classify(row: KeyRow | undefined, scope: KeyScope, print: string, now: Date): Replay {
  if (row && row.fingerprint !== print) {
    throw new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was used for a different request; use a new key for a new request',
      { details: { idempotencyKey: scope.key.slice(0, 64) } },
    );
  }
  if (row?.status === 'done') {
    // Null only if the answer's shared part were gone, which its longer retention rules out.
    if (row.response_body === null) throw new Error(`stored answer of ${row.request_id} is incomplete`);
    return {
      kind: 'replay',
      status: row.response_status ?? 200,
      body: row.response_body,
      requestId: row.request_id,
    };
  }
  // Running, or released or pruned a moment ago (then the retry takes it).
  const waitMs = Math.max(0, (row?.locked_until?.getTime() ?? now.getTime()) - now.getTime());
  throw new AppError(
    'IDEMPOTENCY_KEY_IN_USE',
    'A request with this Idempotency-Key is still running; retry when it has finished',
    { headers: { 'retry-after': '1' }, details: { lockExpiresInSeconds: Math.ceil(waitMs / 1000) } },
  );
}

/**
 * Stores the answer, in the transaction of the request's charge (or state change). Throws when this
 * request no longer holds the key (its lock lapsed and a retry took over), which rolls the
 * transaction back: the retry's work is the one that counts.
 */
export async function storeAnswer(
  tx: Queryable,
  scope: KeyScope,
  status: number,
  body: string,
): Promise<void> {
  const [ok] = await tx.query(sql.COMPLETE, [scope.accountId, scope.key, scope.requestId, status, body]);
  if (!ok) throw new Error(`Idempotency-Key of ${scope.requestId} was taken over before it finished`);
}

/** Gives the key back after a failure (nothing was charged or created), so a retry runs afresh. */
export async function releaseKey(db: Queryable, scope: KeyScope): Promise<void> {
  await db.query(sql.RELEASE, [scope.accountId, scope.key, scope.requestId]);
}
