import type { Attestations } from '../attestations/index.js';
import { createContext, withTransaction } from '../context.js';
import type { Database } from '../db/database.js';
import { AppError } from '../errors.js';
import { getBalance, refundCharge } from '../ledger/index.js';
import type { Clock } from '../lib/clock.js';
import { randomBase62 } from '../lib/ids.js';
import type { Log } from '../logger.js';
import { type PriceService, type PriceTarget, presentPrice, requireToken } from '../prices/index.js';
import type { QueueHandler } from '../queue/queue.js';
import { type CallbackOutbox, eventsOf, newEventId } from '../webhooks/index.js';
import { cannotSign, signAiJob, signingRefused, signPriceCheck } from './attest.js';
import type { JobRow, PriceJobRow } from './jobs.js';
import type { AiJobResolver } from './ports.js';
import * as sql from './sql.js';
import { enqueueJobCallback, type Outcome, recordJobEvents } from './told.js';

const FINISH_COMPLETED = sql.finishCompleted(eventsOf);

export interface JobRunnerDeps {
  db: Database;
  clock: Clock;
  log: Log;
  prices: PriceService;
  ai: AiJobResolver;
  callbacks: CallbackOutbox;
  /** Price checks' own room (docs/jobs.md#claims), when absent: 1,000 a claim, 5,000 held, 2 s ahead. */
  settings: { concurrency: number; priceLeaseMs: number; aiLeaseMs: number; maxAttempts: number } & {
    [K in 'priceClaimSize' | 'priceHeld' | 'claimAheadMs']?: number;
  };
  /** Signs completed results (docs/attestations.md#scheduled-jobs); absent or off: no attestation. */
  attestations?: Attestations;
}

/** A job that ran, and how it ended: what finishing it writes. */
interface Ran {
  job: JobRow;
  outcome: Outcome;
}

/**
 * Runs scheduled jobs: claims due ones (and those whose worker died) with a lease, does the work
 * outside any transaction, then finishes the job — status, result, refund of a failed job, callback
 * row — in one transaction, only if it still holds the lease. A job whose worker died mid-work is
 * run again after its lease; it completes once.
 *
 * Every claim counts a run (`attempts`), whether the run ends in an error or takes its worker down
 * with it: a job claimed more than `maxAttempts` times is not run again but FAILED and refunded, so
 * one job that kills its workers cannot crash-loop them for ever.
 *
 * Price checks claimed together run together: one price read per token (they are due in the same
 * moment, and the result says when the price was computed), then one finishing statement or
 * transaction for all the jobs of that token. AI resolutions run one by one. A job that comes back
 * after a run that never finished is claimed by itself and runs alone, so that a job whose run kills
 * its worker takes no neighbour down with it again.
 * Price checks are not held back by the AI `concurrency`: claimed in batches of their own, up to
 * `claimAheadMs` ahead, they wait in timers until their time; START counts their run (docs/jobs.md#claims).
 */
export function jobQueueHandler(deps: JobRunnerDeps): QueueHandler<JobRow> {
  const { db, settings } = deps;
  return {
    name: 'scheduled-jobs',
    channel: sql.JOBS_CHANNEL,
    concurrency: settings.concurrency,
    batching: {
      capacity: settings.priceHeld ?? 5000,
      claimSize: settings.priceClaimSize ?? 1000,
      aheadMs: settings.claimAheadMs ?? 2000,
      startsAt: (job) => job.scheduled_for,
      async release(jobs) {
        const tokens = [...new Set(jobs.map((job) => job.lease_token))];
        await db.query(sql.RELEASE, [jobs.map((job) => job.id), tokens]);
      },
    },
    claim: (limit, now, batches) => {
      const { priceLeaseMs, aiLeaseMs } = settings;
      const token = randomBase62(16);
      const prices = [batches?.limit ?? limit, batches?.until ?? now];
      return db.query<JobRow>(sql.CLAIM, [now, limit, token, priceLeaseMs, aiLeaseMs, ...prices]);
    },
    process: async (claimed) => {
      const [job] = await startClaimedAhead(deps, [claimed]);
      if (!job) return;
      return job.attempts > settings.maxAttempts
        ? abandonJobs(deps, [job])
        : (await cannotSign(deps.attestations))
          ? giveBack(deps, [job])
          : job.job_type === 'AI_RESOLUTION'
            ? runAiJob(deps, job)
            : runPriceChecks(deps, [job]);
    },
    batchable: (job) => job.job_type === 'PRICE_RESOLUTION',
    // A job back for another run (its last one never finished) runs alone; a spent one is only
    // ended, which no worker dies of.
    runsAlone: (job) => job.attempts > 1 && job.attempts <= settings.maxAttempts,
    async processBatch(claimed) {
      const jobs = await startClaimedAhead(deps, claimed);
      const spent = jobs.filter((job) => job.attempts > settings.maxAttempts);
      const runs = jobs.filter(
        (job): job is PriceJobRow =>
          job.job_type === 'PRICE_RESOLUTION' && job.attempts <= settings.maxAttempts,
      );
      const run = (await cannotSign(deps.attestations)) ? giveBack(deps, runs) : runPriceChecks(deps, runs);
      const results = await Promise.allSettled([abandonJobs(deps, spent), run]);
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason; // logged by the queue; retried after the lease
    },
    async nextDueAt(_now, looking) {
      const [row] = await db.query<{ next: Date | null }>(sql.NEXT_DUE, [
        looking?.singles ?? true,
        looking ? looking.batchesAheadMs : 0,
      ]);
      return row?.next ?? null;
    },
  };
}

/**
 * Starts the jobs claimed ahead (`started_at` NULL), their time come: their run counts from here
 * (START). Returns the jobs to run; one whose lease was lost meanwhile is left to its new holder.
 */
async function startClaimedAhead(deps: JobRunnerDeps, jobs: JobRow[]): Promise<JobRow[]> {
  const ahead = jobs.filter((job) => job.started_at === null);
  if (ahead.length === 0) return jobs;
  const started = await deps.db.query<Pick<JobRow, 'id' | 'attempts' | 'started_at'>>(sql.START, [
    heldLeases(ahead),
    deps.clock.now(),
    deps.settings.priceLeaseMs,
  ]);
  const runs = new Map(started.map((row) => [row.id, row]));
  if (runs.size < ahead.length) {
    for (const job of ahead) {
      if (!runs.has(job.id))
        deps.log.warn({ jobId: job.id }, 'scheduled job lost its lease before it started');
    }
  }
  return [
    ...jobs.filter((job) => job.started_at !== null),
    ...ahead.flatMap((job) => {
      const run = runs.get(job.id);
      return run ? [{ ...job, attempts: run.attempts, started_at: run.started_at }] : [];
    }),
  ];
}

/** The leases of `jobs` as the statements that act on held jobs take them: `{ "<id>": "<token>" }`. */
function heldLeases(jobs: readonly JobRow[]): string {
  return JSON.stringify(Object.fromEntries(jobs.map((job) => [job.id, job.lease_token])));
}

const GAVE_UP: Extract<Outcome, { ok: false }> = {
  ok: false,
  error: { code: 'INTERNAL_ERROR', message: 'The job could not be run; it was refunded' },
};

/**
 * Jobs claimed once more than their runs allow: each earlier run ended in an error or with its worker
 * gone. They fail, refunded once, with their failure callback, and are not run again.
 */
async function abandonJobs(deps: JobRunnerDeps, jobs: JobRow[]): Promise<void> {
  if (jobs.length === 0) return;
  deps.log.error(
    { jobIds: jobs.map((job) => job.id), maxAttempts: deps.settings.maxAttempts },
    'scheduled job abandoned: no run finished; failed and refunded without running it again',
  );
  await finishJobs(
    deps,
    jobs.map((job) => ({ job, outcome: GAVE_UP })),
  );
}

/**
 * Jobs this worker may not finish because it cannot sign (docs/attestations.md#rotation): not run,
 * their attempt given back; they come back after their lease, to a worker that can sign.
 */
async function giveBack(deps: JobRunnerDeps, jobs: JobRow[]): Promise<void> {
  if (jobs.length === 0) return;
  deps.log.error(
    { jobIds: jobs.map((job) => job.id) },
    'scheduled job not run: this worker cannot sign (its attestation key was retired); back after its lease',
  );
  await deps.db.query(sql.GIVE_BACK_ATTEMPT, [heldLeases(jobs)]);
}

async function runAiJob(deps: JobRunnerDeps, job: JobRow & { job_type: 'AI_RESOLUTION' }): Promise<void> {
  let resolved: Awaited<ReturnType<AiJobResolver['resolve']>>;
  try {
    resolved = await deps.ai.resolve(job.request, job.mode, job.request_id);
  } catch (err) {
    if (job.attempts < deps.settings.maxAttempts) throw err; // logged by the queue; retried after the lease
    deps.log.error({ err, jobId: job.id }, 'scheduled job failed on every attempt');
    resolved = GAVE_UP;
  }
  let outcome: Outcome = resolved.ok ? { ok: true, result: resolved.result } : resolved;
  if (resolved.ok) {
    const signing = signAiJob(deps.attestations, job, resolved.answer, deps.clock.now().getTime());
    const attestation = await signing.catch(async (err: unknown) => {
      if (!signingRefused(err)) throw err;
      await giveBack(deps, [job]);
      return undefined;
    });
    if (attestation === undefined) return;
    if (attestation) outcome = { ok: true, result: { ...resolved.result, attestation } };
  }
  await finishJobs(deps, [{ job, outcome }]);
}

/** Price checks of one token in one mode, named the same way. */
interface TokenGroup {
  mode: JobRow['mode'];
  symbol: string;
  target: PriceTarget;
  jobs: JobRow[];
}

/**
 * Runs price checks claimed together: a job whose symbol is malformed or unknown fails at once; the
 * others are grouped by token, and each group is priced once and finished together, so that a slow
 * venue for one token holds back only that token's jobs.
 */
async function runPriceChecks(deps: JobRunnerDeps, jobs: PriceJobRow[]): Promise<void> {
  const refused: Ran[] = [];
  const groups = new Map<string, TokenGroup>();
  for (const job of jobs) {
    let token: { symbol: string; target: PriceTarget };
    try {
      token = requireToken(String(job.request.symbol ?? ''), 'symbol');
    } catch (err) {
      refused.push({ job, outcome: expectedFailure(err) ?? GAVE_UP });
      continue;
    }
    const key = `${job.mode}\u0000${token.target.key}\u0000${token.symbol}`;
    const group = groups.get(key);
    if (group) group.jobs.push(job);
    else groups.set(key, { mode: job.mode, ...token, jobs: [job] });
  }
  const finishing = [...groups.values()].map(async (group) =>
    finishJobs(deps, await priceGroup(deps, group)),
  );
  if (refused.length > 0) finishing.push(finishJobs(deps, refused));
  const failures = (await Promise.allSettled(finishing)).filter((r) => r.status === 'rejected');
  if (failures.length > 0) throw failures[0]?.reason; // logged by the queue; retried after the lease
}

async function priceGroup(deps: JobRunnerDeps, group: TokenGroup): Promise<Ran[]> {
  try {
    // A mint outside the registry costs the venues a call, taken from the share of the account whose
    // check asked first (the group's others share its answer, as concurrent requests do).
    const price = await deps.prices.price(group.target, group.mode, group.symbol, group.jobs[0]?.account_id);
    const presented = presentPrice(price, group.target);
    const now = deps.clock.now();
    const resolutionTimestamp = now.toISOString();
    const priced = { symbol: group.symbol, ...presented, timeMs: now.getTime() };
    return Promise.all(
      group.jobs.map(async (job) => {
        const attestation = await signPriceCheck(deps.attestations, job, priced);
        const result = { requestId: job.request_id, symbol: group.symbol, ...presented, resolutionTimestamp };
        return { job, outcome: { ok: true, result: attestation ? { ...result, attestation } : result } };
      }),
    );
  } catch (err) {
    if (signingRefused(err)) {
      await giveBack(deps, group.jobs);
      return [];
    }
    const failure = expectedFailure(err);
    if (failure) return group.jobs.map((job) => ({ job, outcome: failure }));
    // Unexpected: the jobs with runs left come back after the lease; the others fail for good.
    const spent = group.jobs.filter((job) => job.attempts >= deps.settings.maxAttempts);
    deps.log.error(
      { err, jobIds: group.jobs.map((job) => job.id), failedForGood: spent.length },
      spent.length > 0 ? 'scheduled job failed on every attempt' : 'scheduled price check failed; retried',
    );
    return spent.map((job) => ({ job, outcome: GAVE_UP }));
  }
}

/** How an error that a price check can end in reads in the job, or null for an unexpected one. */
function expectedFailure(err: unknown): Outcome | null {
  if (!(err instanceof AppError)) return null;
  if (err.status < 500 || err.code === 'PRICE_UNAVAILABLE') {
    return { ok: false, error: { code: err.code, message: err.message } };
  }
  return null;
}

/**
 * Finishes jobs together; should that fail, finishes each alone, so that one job whose finishing
 * fails (it is retried after the lease) does not hold back the others.
 */
async function finishJobs(deps: JobRunnerDeps, ran: Ran[]): Promise<void> {
  if (ran.length === 0) return;
  try {
    await finishTogether(deps, ran);
  } catch (err) {
    if (ran.length === 1) throw err;
    deps.log.warn(
      { err, jobs: ran.length },
      'finishing scheduled jobs together failed; finishing each alone',
    );
    const results = await Promise.allSettled(ran.map((one) => finishTogether(deps, [one])));
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) throw failed[0]?.reason;
  }
}

/**
 * One transaction finishes the jobs and records their events (`job.completed`, `job.failed`: one
 * statement for all of them); when a job failed or has a callback, it also refunds the failed ones
 * and writes the callbacks' outbox rows. Each job's status, result, refund, event and callback
 * commit together, and only for a job whose lease still holds.
 */
async function finishTogether(deps: JobRunnerDeps, ran: Ran[]): Promise<void> {
  const finishing = (deliveries?: ReadonlyMap<string, string>) =>
    JSON.stringify(
      Object.fromEntries(
        ran.map(({ job, outcome }) => [
          job.id,
          {
            lease_token: job.lease_token,
            status: outcome.ok ? 'COMPLETED' : 'FAILED',
            result: outcome.ok ? outcome.result : undefined,
            error: outcome.ok ? undefined : outcome.error,
            delivery_id: deliveries?.get(job.id),
          },
        ]),
      ),
    );
  const byId = new Map(ran.map((one) => [one.job.id, one]));
  // The jobs this worker still held, as it ran them (the columns read here never change).
  const held = (rows: { id: string }[]): Ran[] => rows.flatMap((row) => byId.get(row.id) ?? []);
  if (ran.every(({ job, outcome }) => outcome.ok && !job.callback_url)) {
    // Nothing to refund, no callback: one statement completes them and records their events.
    const completing = Object.fromEntries(
      ran.map(({ job, outcome }) => [
        job.id,
        { t: job.lease_token, e: newEventId(), r: JSON.stringify(outcome.ok ? outcome.result : null) },
      ]),
    );
    const rows = await deps.db.query<{ id: string }>(FINISH_COMPLETED, [
      JSON.stringify(completing),
      deps.clock.now(),
    ]);
    warnLostLeases(deps, ran, held(rows));
    return;
  }
  const ctx = createContext(deps.db, deps.clock);
  await withTransaction(ctx, async (tx) => {
    const locked = held(
      await tx.tx.query<{ id: string }>(sql.LOCK_HELD, [heldLeases(ran.map((r) => r.job))]),
    );
    warnLostLeases(deps, ran, locked);
    // Refunds lock account rows: in one order (account, then job), so that two batches never deadlock.
    locked.sort((a, b) => compare(a.job.account_id, b.job.account_id) || compare(a.job.id, b.job.id));
    const refunds = new Map<string, bigint>();
    for (const { job, outcome } of locked) {
      if (outcome.ok) continue;
      const refund = await refundCharge(tx.tx, {
        chargeEntryId: job.charge_entry_id,
        accountId: job.account_id,
        memo: `failed ${job.id}`,
      });
      refunds.set(job.id, refund.amountMicros);
    }
    await recordJobEvents(tx, locked);
    // Balances once the refunds are in: what the account has when this transaction commits.
    const balances = new Map<string, bigint>();
    const deliveries = new Map<string, string>();
    for (const { job, outcome } of locked) {
      if (!job.callback_url) continue;
      let balance = balances.get(job.account_id);
      if (balance === undefined) {
        balance = await getBalance(tx, job.account_id);
        balances.set(job.account_id, balance);
      }
      const deliveryId = await enqueueJobCallback(deps, tx, job, outcome, refunds.get(job.id) ?? 0n, balance);
      deliveries.set(job.id, deliveryId);
    }
    await tx.tx.query(sql.FINISH, [finishing(deliveries), tx.clock.now()]);
  });
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function warnLostLeases(deps: JobRunnerDeps, ran: Ran[], finished: Ran[]): void {
  if (finished.length === ran.length) return;
  const done = new Set(finished.map(({ job }) => job.id));
  for (const { job } of ran) {
    // The lease lapsed and another worker took the job: its run is the one that counts.
    if (!done.has(job.id)) deps.log.warn({ jobId: job.id }, 'scheduled job lost its lease before finishing');
  }
}
