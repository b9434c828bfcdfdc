// temporary (not committed): EXPLAIN ANALYZE of the finishing statements on 10,000 leased jobs
import { migrate } from '../dist/db/migrate.js';
import { PostgresDatabase } from '../dist/db/postgres.js';
import { fundedAccount } from './lib.js';
import * as sql from '../dist/jobs/sql.js';
import { eventsOf } from '../dist/webhooks/events-sql.js';
import { RECORD_EVENTS } from '../dist/webhooks/events-sql.js';
const base = 'postgres://postgres@127.0.0.1:5432/';
const admin = new PostgresDatabase(base + 'test', { poolSize: 1 });
const name = `jobcpu_explain_${process.pid}`;
await admin.exec(`CREATE DATABASE ${name}`);
const db = new PostgresDatabase(base + name, { poolSize: 1 });
try {
  await migrate(db);
  const { accountId } = await fundedAccount(db, { label: 'x', funds: 1_000_000_000n });
  await db.query(`INSERT INTO scheduled_jobs (id, account_id, job_type, status, scheduled_for, request, mode, charge_entry_id, cost_micros, request_id, created_at, attempts, lease_until, lease_token, started_at)
    SELECT 'job_' || lpad(g::text, 22, '0'), $1, 'PRICE_RESOLUTION', 'PENDING', now() - interval '1 s', '{"symbol":"SOL"}', 'sandbox', 1, 1000, 'req_' || lpad(g::text, 22, '0'), now(), 0, NULL, NULL, NULL
    FROM generate_series(1, 20000) g`, [accountId]);
  await db.exec('VACUUM ANALYZE scheduled_jobs');
  const result = (i) => JSON.stringify({ requestId: `req_${String(i).padStart(22, '0')}`, symbol: 'SOL', vwapPrice: 123.456789, sourceCount: 3, isValid: true, sources: ['a', 'b', 'c'], resolutionTimestamp: new Date().toISOString() });
  const mode = process.argv[2];
  const q = (text, params) => db.query(text, params);
  const [{ pid }] = await db.query('SELECT pg_backend_pid() AS pid');
  const { readFileSync } = await import('node:fs');
  const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
  const c0 = cpu();
  let claimMs = 0;
  for (let b = 1; b <= 19; b++) {
    const k0 = cpu();
    const claimed = await db.query(sql.CLAIM.text, [new Date(), 0, `tok${b}`, 30000, 120000, 1000, new Date()]);
    claimMs += cpu() - k0;
    const ids = claimed.map((r) => Number(r.id.slice(4)));
    const now = new Date();
    let plan;
    const t0 = process.hrtime.bigint();
    if (mode === 'old') {
      const fin = JSON.stringify(Object.fromEntries(ids.map((i) => [`job_${String(i).padStart(22, '0')}`, { lease_token: `tok${b}`, status: 'COMPLETED', result: JSON.parse(result(i)) }])));
      await db.transaction(async (tx) => {
        plan = await tx.query(sql.FINISH.text, [fin, now]);
        const evs = ids.map((i) => `evt_${String(b * 100000 + i).padStart(24, 'x')}`);
        const p2 = await tx.query(RECORD_EVENTS.text, [evs, ids.map(() => accountId), ids.map(() => 'sandbox'), ids.map(() => 'job.completed'), ids.map((i) => JSON.stringify({ jobId: `job_${i}`, type: 'price', requestId: `req_${i}` })), ids.map(() => now), ids.map((i) => `{"id":"x","type":"job.completed","createdAt":"${now.toISOString()}","mode":"sandbox","data":{"jobId":"job_${i}","type":"price","requestId":"req_${i}","result":${result(i)}}}`), 5, ids.map(() => null)]);
        plan = plan.concat(p2);
      });
    } else {
      const stmt = sql.finishCompleted(eventsOf);
      const fin = JSON.stringify(Object.fromEntries(ids.map((i) => [`job_${String(i).padStart(22, '0')}`, { t: `tok${b}`, e: `evt_${String(b * 100000 + i).padStart(24, 'x')}`, r: result(i) }])));
      plan = await q(stmt.text, [fin, now]);
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (false) console.log(plan.map((r) => r['QUERY PLAN']).filter((l) => !l.includes('Filter: (lease')).join('\n'));
  }
  console.log(mode, 'PG backend CPU ms for 19,000: all', cpu() - c0, 'claim', claimMs);
} finally {
  await db.close();
  await admin.exec(`DROP DATABASE ${name} WITH (FORCE)`);
  await admin.close();
}
