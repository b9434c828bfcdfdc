import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAttestations } from '../../src/attestations/attestor.js';
import { generateSecret, keyPairFromSecret } from '../../src/attestations/keys.js';
import { listKeys, rotateKeys } from '../../src/attestations/registry.js';
import { AppError } from '../../src/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import type { Log } from '../../src/logger.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { verifies } from './helpers.js';

/**
 * A running process whose `ATTESTATION_SECRET_KEY` a rotation retired (docs/attestations.md#rotation):
 * it stops signing at once, says so at error level, and a process started with the new key signs.
 * Across real processes on PostgreSQL: test/attestations/processes.test.ts.
 */

const PRICE = {
  mode: 'live' as const,
  requestId: 'req_rotation',
  timeMs: 1_795_000_000_000,
  symbolOrMint: 'SOL',
  price: 150.25,
  sources: 3,
  valid: true,
};

function recordingLog() {
  const lines: { level: string; obj: object; msg: string }[] = [];
  const log: Log = {
    info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
  return { log, lines };
}

describe('a process whose key a rotation retired', () => {
  let database: TestDatabase;
  const clock = new ManualClock('2026-12-07T12:00:00Z');

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  it('stops signing within the sync period (503 ATTESTATION_UNAVAILABLE), says so at error level; the new key signs', async () => {
    const k1 = generateSecret();
    const k2 = generateSecret();
    const { log, lines } = recordingLog();
    const running = createAttestations(database.db, { secretKey: k1, syncMs: 100 }, clock, log);
    const next = createAttestations(database.db, { secretKey: k2, syncMs: 100 }, clock);
    try {
      const before = await running.sign({ kind: 'price', fields: PRICE });
      expect(before?.publicKey).toBe(keyPairFromSecret(k1, 'k1').live.publicKeyBase58);
      expect(await running.signing()).toBe(true);

      clock.advance(60_000);
      // `sibyl attestation rotate` with ATTESTATION_SECRET_KEY=K2, through the same database.
      await rotateKeys(database.db, { secretKey: k2, syncMs: 100 }, clock);

      await vi.waitFor(async () => expect(await running.signing()).toBe(false), {
        timeout: 10_000,
        interval: 20,
      });
      const refused = await running.sign({ kind: 'price', fields: PRICE }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({ code: 'ATTESTATION_UNAVAILABLE', status: 503 });
      await vi.waitFor(() => expect(lines.filter((l) => l.level === 'error')).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      const said = lines.find((l) => l.level === 'error');
      expect(said?.msg).toMatch(/attestation key retired: this process signs nothing/);
      expect(said?.obj).toMatchObject({ publicKey: before?.publicKey });
      expect(JSON.stringify(lines)).not.toContain(k1);
      // Still refused on every check; said again at most once a minute.
      clock.advance(61_000);
      await vi.waitFor(() => expect(lines.filter((l) => l.level === 'error')).toHaveLength(2), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await running.signing()).toBe(false);

      // A process started with the new key signs with it.
      const signed = await next.sign({ kind: 'price', fields: PRICE });
      const k2Live = keyPairFromSecret(k2, 'k2').live.publicKeyBase58;
      expect(signed?.publicKey).toBe(k2Live);
      expect(signed && verifies(signed, k2Live)).toBe(true);
    } finally {
      await running.close();
      await next.close();
    }
  });

  it('a compromise, unlike a routine rotation, marks the retired keys: `rotate --compromised`, `revoke`', async () => {
    const [k3, k4, k5] = [generateSecret(), generateSecret(), generateSecret()];
    const pairOf = (secret: string) => keyPairFromSecret(secret, 'key');
    const entry = async (publicKey: string) =>
      (await listKeys(database.db)).find((k) => k.publicKey === publicKey);
    // Routine: retired, not compromised.
    const routine = await runCliOn(database.db, ['attestation', 'rotate', '--json'], {
      ATTESTATION_SECRET_KEY: k3,
    });
    expect(routine.status, routine.stderr).toBe(0);
    const { retired } = JSON.parse(routine.stdout) as { retired: string[] };
    expect(retired).toHaveLength(2);
    for (const key of retired) {
      expect((await entry(key))?.retiredAt).not.toBeNull();
      expect((await entry(key))?.compromisedAt).toBeNull();
    }
    // Compromised at the rotation: both keys of the pair, at the retirement.
    const leaked = await runCliOn(database.db, ['attestation', 'rotate', '--compromised'], {
      ATTESTATION_SECRET_KEY: k4,
    });
    expect(leaked.status, leaked.stderr).toBe(0);
    for (const key of [pairOf(k3).live, pairOf(k3).sandbox]) {
      const listed = await entry(key.publicKeyBase58);
      expect(listed?.compromisedAt).toBe(listed?.retiredAt);
      expect(listed?.compromisedAt).not.toBeNull();
    }
    // Found out later: `revoke` marks a retired key and its pair; a current key is refused.
    await runCliOn(database.db, ['attestation', 'rotate'], { ATTESTATION_SECRET_KEY: k5 });
    const current = await runCliOn(
      database.db,
      ['attestation', 'revoke', pairOf(k5).live.publicKeyBase58],
      {},
    );
    expect(current.status).not.toBe(0);
    expect(current.stderr).toContain('rotate --compromised');
    const revoked = await runCliOn(
      database.db,
      ['attestation', 'revoke', pairOf(k4).sandbox.publicKeyBase58],
      {},
    );
    expect(revoked.status, revoked.stderr).toBe(0);
    expect((await entry(pairOf(k4).live.publicKeyBase58))?.compromisedAt).not.toBeNull();
    expect((await entry(pairOf(k4).sandbox.publicKeyBase58))?.compromisedAt).not.toBeNull();
    expect((await entry(pairOf(k5).live.publicKeyBase58))?.compromisedAt).toBeNull();
  });
});
