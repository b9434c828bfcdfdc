import type { Database } from '../db/database.js';
import { systemClock } from '../lib/clock.js';
import { type CommandArgs, type Output, option, UsageError } from '../lib/command-line.js';
import { formatUsd } from '../lib/money.js';
import { canCancel, JOB_STATUSES, type JobRow, type JobStatus } from './jobs.js';
import * as sql from './sql.js';

function operatorView(job: JobRow, now: Date) {
  return {
    id: job.id,
    accountId: job.account_id,
    jobType: job.job_type,
    status: job.status,
    scheduledFor: job.scheduled_for.toISOString(),
    createdAt: job.created_at.toISOString(),
    startedAt: job.started_at?.toISOString() ?? null,
    finishedAt: job.finished_at?.toISOString() ?? null,
    attempts: job.attempts,
    canCancel: canCancel(job, now),
    mode: job.mode,
    costUsd: formatUsd(job.cost_micros),
    request: job.request,
    callbackUrl: job.callback_url,
    result: job.result,
    error: job.error,
    deliveryId: job.delivery_id,
  };
}

/** `sibyl jobs list [--status S] [--due]` and `sibyl jobs show ID`. */
export async function jobsCommand(
  db: Database,
  out: Output,
  action: string,
  args: CommandArgs,
): Promise<void> {
  const now = systemClock.now();
  switch (action) {
    case 'list': {
      const status = option(args, 'status');
      if (status !== undefined && !(JOB_STATUSES as readonly string[]).includes(status)) {
        throw new UsageError(`--status takes one of ${JOB_STATUSES.join(', ')}`);
      }
      const due = args.options.due === true ? now : null;
      const rows = await db.query<JobRow>(sql.OPERATOR_LIST, [
        (status as JobStatus | undefined) ?? null,
        due,
        500,
      ]);
      const jobs = rows.map((job) => operatorView(job, now));
      out.result(
        { jobs, total: jobs.length },
        jobs.length === 0
          ? 'No jobs'
          : jobs
              .map(
                (j) =>
                  `${j.id}  ${j.jobType.padEnd(16)} ${j.status.padEnd(10)} ${j.scheduledFor}  ${j.accountId}`,
              )
              .join('\n'),
      );
      return;
    }
    case 'show': {
      const id = args.positionals[0];
      if (!id) throw new UsageError('missing JOB_ID');
      const [row] = await db.query<JobRow>(sql.FIND_ANY, [id]);
      if (!row) throw new UsageError(`no job ${id}`);
      const view = operatorView(row, now);
      out.result(view, JSON.stringify(view, null, 2));
      return;
    }
    default:
      throw new UsageError(`unknown jobs action "${action}"`);
  }
}
