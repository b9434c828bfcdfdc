import type { Clock } from '../lib/clock.js';
import type { Log } from '../logger.js';

export interface PeriodicTask {
  name: string;
  intervalMs: number;
  /**
   * `now` is the injected clock's time of this run. A long run (one that loops) stops early when
   * `signal` is aborted: the process is stopping.
   */
  run(now: Date, signal: AbortSignal): Promise<void>;
}

/**
 * Runs each task every `intervalMs`, never two runs of one task at once, and logs failures
 * instead of dying on them. `stop()` waits for runs in progress to finish.
 */
export class PeriodicRunner {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private stopped = false;

  constructor(
    private readonly tasks: PeriodicTask[],
    private readonly deps: { clock: Clock; log: Log },
  ) {}

  start(): void {
    for (const task of this.tasks) {
      let busy = false;
      const tick = () => {
        if (busy || this.stopped) return;
        busy = true;
        const run = task
          .run(this.deps.clock.now(), this.stopping.signal)
          .catch((err: unknown) => this.deps.log.error({ err, task: task.name }, 'periodic task failed'))
          .finally(() => {
            busy = false;
            this.running.delete(run);
          });
        this.running.add(run);
      };
      const timer = setInterval(tick, task.intervalMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    for (const timer of this.timers) clearInterval(timer);
    await Promise.all(this.running);
  }
}
