import type { AccountMode } from '../accounts/index.js';
import { type Context, queryable, type TxContext } from '../context.js';
import type { Queryable } from '../db/database.js';
import { AppError, notFound, type ValidationProblem, validationError } from '../errors.js';
import type { Charged } from '../ledger/index.js';
import { formatUsd } from '../lib/money.js';
import type { CallbackOutbox } from '../webhooks/index.js';
import { DEFAULT_CONFIDENCE_THRESHOLD } from './consensus.js';
import type { AbstainReason, Evidence } from './evidence.js';
import { BODY_PATHS, checkQuestion } from './input.js';
import type { MarketSource } from './market-port.js';
import type { Resolver } from './resolver.js';
import type {
  AiRecordObject,
  AiRequestSummaryObject,
  AiResultObject,
  AiVoteObject,
  ResolveBodyInput,
} from './schemas.js';
import * as sql from './sql.js';
import type { ModelFailure, ResolutionQuestion, SearchMode, Vote } from './types.js';

/** A request row, as the statements of sql.ts return it. */
export interface RequestRow {
  id: string;
  account_id: string;
  mode: AccountMode;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  question: string;
  outcomes: string[];
  /** As sent: null when the request gave none, `''` when it gave `""`. */
  context: string | null;
  confidence_threshold: number;
  callback_url: string | null;
  market_id: string | null;
  charge_entry_id: bigint;
  cost_micros: bigint;
  balance_after_micros: bigint;
  result: AiResultObject | null;
  error_code: string | null;
  error_message: string | null;
  refund_entry_id: bigint | null;
  attempts: number;
  lease_token: string | null;
  created_at: Date;
  completed_at: Date | null;
  callback_delivery_id: string | null;
}

/** A checked submission, ready to be charged and stored. */
export interface Submission {
  question: ResolutionQuestion;
  mode: AccountMode;
  confidenceThreshold: number;
  callbackUrl: string | null;
  marketId: string | null;
}

export interface SubmitDeps {
  resolver: Resolver;
  markets: MarketSource;
  callbacks: CallbackOutbox;
}

function collect(problems: ValidationProblem[], check: () => void): void {
  try {
    check();
  } catch (err) {
    const listed =
      err instanceof AppError ? (err.details?.problems as ValidationProblem[] | undefined) : undefined;
    if (!listed) throw err;
    problems.push(...listed);
  }
}

/**
 * Checks a POST /ai/resolve body, every problem at once (VALIDATION_ERROR), finds the market of a
 * `{ marketId }` body (NOT_FOUND), and refuses a live resolution the deployment cannot run
 * (AI_UNAVAILABLE) — all before anything is charged.
 */
export async function prepareSubmission(
  ctx: Context,
  deps: SubmitDeps,
  body: ResolveBodyInput,
  accountMode: AccountMode,
): Promise<Submission> {
  const problems: ValidationProblem[] = [];
  const confidenceThreshold = body.confidenceThreshold ?? DEFAULT_CONFIDENCE_THRESHOLD;
  const callbackUrl = body.callbackUrl ?? null;
  if (callbackUrl !== null)
    collect(problems, () => deps.callbacks.validateCallbackUrl(callbackUrl, 'body.callbackUrl'));

  if (body.marketId !== undefined) {
    for (const field of ['question', 'outcomes', 'context'] as const) {
      if (body[field] !== undefined)
        problems.push({ path: `body.${field}`, message: 'must not be given with marketId' });
    }
    if (problems.length > 0) throw validationError(problems);
    const market = await deps.markets.find(ctx, body.marketId);
    if (!market) throw notFound(`Market ${body.marketId}`);
    const mode: AccountMode = accountMode === 'sandbox' || market.mode === 'sandbox' ? 'sandbox' : 'live';
    // A market without a description asks without context (null), as it always has.
    const context = market.context === '' ? null : market.context;
    const question = { question: market.question, outcomes: market.outcomes, context };
    const marketProblems = checkQuestion(question, {
      sandbox: mode === 'sandbox',
      paths: { question: 'market.title', outcomes: 'market.outcomes', context: 'market.description' },
    });
    if (marketProblems.length > 0) {
      throw validationError(marketProblems, `Market ${body.marketId} cannot be resolved as it stands`);
    }
    deps.resolver.requireAvailable(mode);
    return { question, mode, confidenceThreshold, callbackUrl, marketId: market.id ?? body.marketId };
  }

  if (body.question === undefined) problems.push({ path: 'body.question', message: 'is required' });
  if (body.outcomes === undefined) problems.push({ path: 'body.outcomes', message: 'is required' });
  if (callbackUrl === null) problems.push({ path: 'body.callbackUrl', message: 'is required' });
  const question = {
    question: body.question ?? '',
    outcomes: body.outcomes ?? [],
    context: body.context ?? null,
  };
  if (body.question !== undefined && body.outcomes !== undefined) {
    problems.push(...checkQuestion(question, { sandbox: accountMode === 'sandbox', paths: BODY_PATHS }));
  }
  if (problems.length > 0) throw validationError(problems);
  deps.resolver.requireAvailable(accountMode);
  return { question, mode: accountMode, confidenceThreshold, callbackUrl, marketId: null };
}

/**
 * Charges the request and stores it as PENDING in the caller's transaction (both commit, or
 * neither), and wakes the workers when it commits. The AI request id is the submitting HTTP
 * request's id, which is also the charge's request id.
 */
export async function submitRequest(
  tx: TxContext,
  submission: Submission,
  pay: () => Promise<Charged>,
): Promise<{ requestId: string; status: 'processing' }> {
  const principal = tx.principal;
  const requestId = tx.requestId;
  if (!principal || !requestId) throw new Error('submitRequest needs the submitting key and request id');
  const charged = await pay();
  await tx.tx.query(sql.INSERT_REQUEST, [
    requestId,
    principal.accountId,
    principal.keyId,
    submission.mode,
    submission.question.question,
    submission.question.outcomes,
    submission.question.context,
    submission.confidenceThreshold,
    submission.callbackUrl,
    submission.marketId,
    charged.entryId,
    charged.amountMicros,
    charged.balanceMicros,
    tx.clock.now(),
  ]);
  return { requestId, status: 'processing' };
}

interface VoteRow {
  request_id: string;
  position: number;
  model: string;
  outcome_index: number | null;
  confidence: number | null;
  reasoning: string | null;
  latency_ms: number;
  error_kind: ModelFailure | null;
  error_message: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  evidence: Evidence[];
  searches: number | null;
  abstain_reason: AbstainReason | null;
  search: SearchMode | null;
}

function toVote(row: VoteRow): Vote {
  return {
    position: Number(row.position),
    model: row.model,
    outcomeIndex: row.outcome_index,
    confidence: row.confidence,
    reasoning: row.reasoning,
    latencyMs: row.latency_ms,
    error: row.error_kind ? { kind: row.error_kind, message: row.error_message ?? '' } : null,
    usage:
      row.input_tokens === null && row.output_tokens === null
        ? null
        : { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
    evidence: row.evidence,
    searches: row.searches,
    abstainReason: row.abstain_reason,
    search: row.search,
  };
}

/** The stored answers of a request, in slot order. */
export async function loadVotes(db: Queryable, requestId: string): Promise<Vote[]> {
  const rows = await db.query<VoteRow>(sql.SELECT_VOTES, [requestId]);
  return rows.map(toVote);
}

/**
 * Stores one model's answer while `leaseToken` still holds the request; the first answer per model
 * wins. False when it was not stored (the lease was lost, or another answer was already there).
 */
export async function saveVote(
  db: Queryable,
  request: { id: string; leaseToken: string },
  vote: Vote,
  answeredAt: Date,
): Promise<boolean> {
  const stored = await db.query(sql.SAVE_VOTE, [
    request.id,
    request.leaseToken,
    vote.position,
    vote.model,
    vote.outcomeIndex,
    vote.confidence,
    vote.reasoning,
    vote.latencyMs,
    vote.error?.kind ?? null,
    vote.error?.message ?? null,
    vote.usage?.inputTokens ?? null,
    vote.usage?.outputTokens ?? null,
    answeredAt,
    JSON.stringify(vote.evidence),
    vote.searches,
    vote.abstainReason,
    vote.search,
  ]);
  return stored.length === 1;
}

/** GET /ai/request/:id: the record of one of the account's requests; another account's is NOT_FOUND. */
export async function getRecord(
  ctx: Context,
  callbacks: CallbackOutbox,
  accountId: string,
  requestId: string,
): Promise<AiRecordObject> {
  const db = queryable(ctx);
  const [row] = await db.query<RequestRow>(sql.SELECT_REQUEST, [requestId, accountId]);
  if (!row) throw notFound(`AI request ${requestId}`);
  const [votes, delivery] = await Promise.all([
    loadVotes(db, requestId),
    row.callback_delivery_id ? callbacks.deliveryView(db, row.callback_delivery_id) : null,
  ]);
  return { ...presentRecord(row, votes), ...(delivery ? { delivery } : {}) };
}

export function presentRecord(row: RequestRow, votes: readonly Vote[]): AiRecordObject {
  return {
    requestId: row.id,
    status: row.status,
    question: row.question,
    outcomes: row.outcomes,
    context: row.context,
    createdAt: row.created_at.toISOString(),
    ...(row.completed_at ? { completedAt: row.completed_at.toISOString() } : {}),
    ...(row.status === 'COMPLETED' && row.result ? { result: storedResult(row.result) } : {}),
    ...(row.status === 'FAILED'
      ? { error: { code: row.error_code ?? '', message: row.error_message ?? '' } }
      : {}),
    ...(row.refund_entry_id !== null ? { refundUsd: formatUsd(row.cost_micros) } : {}),
    votes: votes.map(presentVote),
  };
}

/** A vote as the record, the list and the callback show it: without its slot (the array's order). */
export function presentVote({ position: _position, search, ...vote }: Vote): AiVoteObject {
  return { ...vote, search };
}

/** A stored result as shown: one finished before results had `abstainReason` shows it null. */
function storedResult(result: AiResultObject): AiResultObject {
  return result.abstainReason === undefined ? { ...result, abstainReason: null } : result;
}

export type RequestStatus = RequestRow['status'];

/** `GET /ai/requests`: the account's requests, newest first, a page at a time, each with its votes. */
export async function listRecords(
  ctx: Context,
  accountId: string,
  filter: { status?: RequestStatus | undefined; page: number; pageSize: number },
): Promise<{ requests: AiRequestSummaryObject[]; total: number }> {
  const db = queryable(ctx);
  const status = filter.status ?? null;
  const [rows, [count]] = await Promise.all([
    db.query<RequestRow>(sql.LIST_REQUESTS, [
      accountId,
      status,
      filter.pageSize,
      (filter.page - 1) * filter.pageSize,
    ]),
    db.query<{ total: bigint | number }>(sql.COUNT_REQUESTS, [accountId, status]),
  ]);
  const votes = new Map<string, Vote[]>();
  if (rows.length > 0) {
    const voteRows = await db.query<VoteRow>(sql.SELECT_VOTES_OF, [rows.map((r) => r.id)]);
    for (const vote of voteRows) {
      const list = votes.get(vote.request_id) ?? [];
      list.push(toVote(vote));
      votes.set(vote.request_id, list);
    }
  }
  return {
    requests: rows.map((row) => presentSummary(row, votes.get(row.id) ?? [])),
    total: Number(count?.total ?? 0),
  };
}

function presentSummary(row: RequestRow, votes: readonly Vote[]): AiRequestSummaryObject {
  const result = row.status === 'COMPLETED' ? row.result : null;
  return {
    requestId: row.id,
    status: row.status,
    question: row.question,
    outcomes: row.outcomes,
    context: row.context,
    marketId: row.market_id,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
    winningOutcomeLabel: result?.winningOutcomeLabel ?? null,
    canDetermine: result?.canDetermine ?? null,
    abstainReason: result?.abstainReason ?? null,
    costUsd: formatUsd(row.cost_micros),
    refundUsd: row.refund_entry_id !== null ? formatUsd(row.cost_micros) : null,
    votes: votes.map(presentVote),
  };
}
