import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PgliteDatabase } from '../../src/db/pglite.js';
import { copyPgliteTemplate, usingPostgres } from '../helpers/db.js';

/**
 * Every PGlite database a test opens is a copy of one of two templates (test/helpers/global-setup.ts),
 * whose postgresql.conf asks for a 16 MB buffer pool: PGlite zeroes the pool at each open, and
 * PostgreSQL's default, 128 MB, cost each open ~0.45 s more CPU. Nothing opens the databases template0
 * and template1, so they are dropped: half the files to copy (docs/testing.md#where-the-time-goes).
 */
describe.runIf(!usingPostgres)('the PGlite templates', () => {
  it.each(['migrated', 'empty'] as const)(
    'a copy of the %s template opens with a 16 MB buffer pool and no template databases',
    async (which) => {
      const dir = copyPgliteTemplate(which);
      try {
        const { db } = await PgliteDatabase.open(dir);
        try {
          const [row] = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
          expect(row?.shared_buffers).toBe('16MB');
          const databases = await db.query<{ datname: string }>('SELECT datname FROM pg_database');
          expect(databases.map((d) => d.datname)).toEqual(['postgres']);
        } finally {
          await db.close();
        }
      } finally {
        rmSync(dirname(dir), { recursive: true, force: true });
      }
    },
  );
});
