import { type Queryable, statement } from '../db/database.js';

/**
 * Takes task $1's lease for holder $2 until $3, when it is free at $4: never taken, lapsed, or
 * already this holder's. Returns a row when the holder has it. The row lock of the upsert makes two
 * workers asking at once take turns: the second sees the first's lease and gets nothing.
 */
const ACQUIRE = statement(
  'task_lease_acquire',
  `INSERT INTO task_leases AS l (name, holder, lease_until) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
    WHERE l.lease_until <= $4 OR l.holder = EXCLUDED.holder
   RETURNING holder`,
);

/**
 * A lease on a periodic task that must run in one worker process at a time across the deployment
 * (migration 0020 says why a row rather than an advisory lock). Times come from the caller's clock.
 * A holder that dies simply lets its lease lapse; another worker then takes it.
 */
export class TaskLease {
  constructor(
    private readonly db: Queryable,
    private readonly name: string,
    private readonly holder: string,
  ) {}

  /**
   * Takes (or keeps) the lease until `until` if it is free at `now` or already ours; false when
   * another holder has it — then this one must not run, or must stop.
   */
  async acquire(now: Date, until: Date): Promise<boolean> {
    const rows = await this.db.query(ACQUIRE, [this.name, this.holder, until, now]);
    return rows.length > 0;
  }
}
