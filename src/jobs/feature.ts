/** Scheduled jobs' descriptor (src/feature.ts): their settings, routes, queue and `sibyl jobs`. */
import type { Attestations } from '../attestations/index.js';
import type { Feature } from '../feature.js';
import type { PriceService } from '../prices/index.js';
import type { RetentionSettings } from '../retention/index.js';
import type { CallbackOutbox } from '../webhooks/index.js';
import { type JobSettings, jobSettings } from './config.js';
import type { AiJobResolver } from './ports.js';

export interface Needs {
  config: { jobs: JobSettings; retention: RetentionSettings };
  ports: {
    prices: PriceService;
    callbacks: CallbackOutbox;
    aiJobs: AiJobResolver;
    attestations: Attestations;
  };
}

export const jobsFeature: Feature<{ jobs: typeof jobSettings }, Needs> = {
  name: 'jobs',
  tables: ['scheduled_jobs'],
  settings: { jobs: jobSettings },
  async api(app, { ports }) {
    const { jobRoutes } = await import('./routes.js');
    jobRoutes(app, { callbacks: ports.callbacks, ai: ports.aiJobs });
  },
  async worker({ config, db, clock, log, ports }) {
    const [{ WorkQueue }, { jobQueueHandler }] = await Promise.all([
      import('../queue/queue.js'),
      import('./runner.js'),
    ]);
    const handler = jobQueueHandler({
      db,
      clock,
      log,
      prices: ports.prices,
      callbacks: ports.callbacks,
      ai: ports.aiJobs,
      settings: config.jobs,
      attestations: ports.attestations,
    });
    return { queues: [new WorkQueue(handler, { db, clock, log })] };
  },
  commands: {
    jobs: {
      usage: [
        '  jobs list [--status S] [--due]          scheduled jobs, newest first (--due: pending and due now)',
        '  jobs show JOB_ID                        one job with its request, result and delivery',
      ],
      async run(io, action, args) {
        const { jobsCommand } = await import('./cli.js');
        await jobsCommand(await io.database(), io.out, action, args);
        return true;
      },
    },
  },
  async retention() {
    const { PRUNE } = await import('./sql.js');
    return [{ name: 'scheduled_jobs', prune: PRUNE, keepMs: (c) => c.retention.jobsMs, busy: true }];
  },
};
