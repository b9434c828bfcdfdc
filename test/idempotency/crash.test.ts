import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { createContext } from '../../src/context.js';
import { createKey } from '../../src/keys/keys.js';
import { PERMISSIONS } from '../../src/keys/permissions.js';
import { creditDeposit } from '../../src/ledger/ledger.js';
import { systemClock } from '../../src/lib/clock.js';
import { clearSecretBox } from '../../src/webhooks/secret-box.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/db.js';
import { expectLedgerReconciles } from '../helpers/ledger.js';
import { freePort, httpReady, type ServiceProcess, startService } from '../helpers/process.js';

/**
 * The failure idempotency keys exist for: the API process commits a charge and dies before the
 * client reads its answer. A real `sibyl serve` on PostgreSQL, killed with SIGKILL right after the
 * commit; the client's retry with the same key, on a new process, gets the stored answer and pays
 * nothing more. (Several processes on one database: PostgreSQL only.)
 */

let database: TestDatabase;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  if (usingPostgres) database = await createTestDatabase();
});
afterAll(async () => {
  for (const service of running) await service.kill();
  if (usingPostgres) await database.close();
});

async function serve(port: number): Promise<ServiceProcess> {
  const service = await startService(
    'serve',
    { DATABASE_URL: database.location, PORT: String(port), DB_POOL_SIZE: '4' },
    httpReady(`http://127.0.0.1:${port}`),
  );
  running.push(service);
  return service;
}

/** Sends a request on a raw socket and never reads the answer: a client whose answer is lost. */
function sendAndForget(port: number, path: string, headers: Record<string, string>, body: string): void {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', `content-length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  socket.pause();
}

describe.runIf(usingPostgres)('a crash between commit and answer (PostgreSQL, real processes)', () => {
  it('the retry with the same key gets the stored answer and no second charge', async () => {
    const { db } = database;
    const account = await createAccount(createContext(db, systemClock), { mode: 'sandbox' }, clearSecretBox);
    await creditDeposit(createContext(db, systemClock), {
      accountId: account.id,
      amountMicros: 5_000_000n,
      reference: `crash-${account.id}`,
    });
    const { key } = await createKey(createContext(db, systemClock), {
      actor: { accountId: account.id, permissions: PERMISSIONS, expiresAt: null },
      settings: { name: 'crash test' },
    });
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': 'settlement-42',
    };
    const body = JSON.stringify({ symbols: ['SOL', 'BTC', 'ETH'] });

    const port1 = await freePort();
    const first = await serve(port1);
    sendAndForget(port1, '/api/v1/price/batch', headers, body);
    let charge: { request_id: string } | undefined;
    while (!charge) {
      [charge] = await db.query<{ request_id: string }>(
        `SELECT request_id FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`,
        [account.id],
      );
      if (!charge) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await first.kill();

    const port2 = await freePort();
    await serve(port2);
    const retry = await fetch(`http://127.0.0.1:${port2}/api/v1/price/batch`, {
      method: 'POST',
      headers,
      body,
    });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const answer = (await retry.json()) as { requestId: string; costUsd: string; prices: unknown[] };
    expect(answer.requestId).toBe(charge.request_id);
    expect(answer.costUsd).toBe('0.08');
    expect(answer.prices).toHaveLength(3);
    const charges = await db.query(`SELECT 1 FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'`, [
      account.id,
    ]);
    expect(charges).toHaveLength(1);
    await expectLedgerReconciles(db);
  });
});
