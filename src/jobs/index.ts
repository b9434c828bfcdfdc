/** Scheduled price checks and AI resolutions: the room's door. */

import type { Feature } from '../feature.js';
import { WorkQueue } from '../queue/queue.js';
import { jobsCommand } from './cli.js';
import { jobSettings } from './config.js';
import { jobQueueHandler } from './runner.js';

export { aiJobResolver } from './ai.js';
export { cancelJob, type JobType, listJobs } from './jobs.js';
export type { AiJobResolver } from './ports.js';
export { jobDetail, presentCancellation, presentJob } from './schedule.js';
export { Cancellation, JobDetail, JobIdParams, JobList, JobListQuery } from './schemas.js';
export { PRUNE } from './sql.js';

export const jobsFeature: Feature<{ jobs: typeof jobSettings }> = {
  name: 'jobs',
  settings: { jobs: jobSettings },
  async api(app, { ports }) {
    const { jobRoutes } = await import('./routes.js');
    jobRoutes(app, { callbacks: ports.callbacks, ai: ports.aiJobs });
  },
  worker: ({ config, db, clock, log, ports }) => ({
    queues: [
      new WorkQueue(
        jobQueueHandler({
          db,
          clock,
          log,
          prices: ports.prices,
          callbacks: ports.callbacks,
          ai: ports.aiJobs,
          settings: config.jobs,
        }),
        { db, clock, log },
      ),
    ],
  }),
  commands: {
    jobs: {
      usage: [
        '  jobs list [--status S] [--due]          scheduled jobs, newest first (--due: pending and due now)',
        '  jobs show JOB_ID                        one job with its request, result and delivery',
      ],
      async run(io, action, args) {
        await jobsCommand(await io.database(), io.out, action, args);
        return true;
      },
    },
  },
};
