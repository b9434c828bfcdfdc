import type { Database } from '../db/database.js';
import type { PeriodicTask } from '../worker/periodic.js';

/** The revocation feed is only read over a trailing window of seconds; a day of it is plenty. */
const AUTH_CHANGES_RETENTION_MS = 24 * 60 * 60 * 1000;

export function keyTasks(deps: { db: Database }): PeriodicTask[] {
  return [
    {
      name: 'prune-auth-changes',
      intervalMs: 60 * 60 * 1000,
      run: async (now) => {
        await deps.db.query('DELETE FROM auth_changes WHERE created_at < $1', [
          new Date(now.getTime() - AUTH_CHANGES_RETENTION_MS),
        ]);
      },
    },
  ];
}
