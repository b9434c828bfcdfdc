import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext, withTransaction } from '../../src/context.js';
import { checkSignedMessage, createChallenge } from '../../src/dashboard/sign-in.js';
import { AppError } from '../../src/errors.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { TestWallet } from '../helpers/wallet.js';

/**
 * The sign-in verbs reach the database through their context (docs/architecture.md#verb-shape): called
 * inside a caller's transaction, a challenge is stored and read in that transaction, and its rollback
 * takes the challenge with it.
 */

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});

const place = { domain: 'dashboard.test', uri: 'https://dashboard.test', chainId: 'mainnet' };

class RolledBack extends Error {}

describe('a challenge in a transaction', () => {
  it('is stored and found in the caller’s transaction, and gone with its rollback', async () => {
    const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
    const ctx = createContext(database.db, clock);
    const wallet = new TestWallet();
    let signed: ReturnType<TestWallet['signIn']> | undefined;

    const inside = withTransaction(ctx, async (tx) => {
      const input = await createChallenge(tx, place, { address: wallet.address });
      signed = wallet.signIn({ ...input });
      // Read in the same transaction: the challenge is there before anything commits.
      const found = await checkSignedMessage(
        tx,
        place,
        { kind: 'sign-in' },
        { address: wallet.address, ...signed },
      );
      expect(found).toEqual(input);
      throw new RolledBack();
    });
    await expect(inside).rejects.toBeInstanceOf(RolledBack);

    const after = checkSignedMessage(
      ctx,
      place,
      { kind: 'sign-in' },
      {
        address: wallet.address,
        ...(signed as NonNullable<typeof signed>),
      },
    );
    await expect(after).rejects.toBeInstanceOf(AppError);
    await expect(after).rejects.toMatchObject({
      code: 'SIGN_IN_REJECTED',
      details: { reason: 'nonce_unknown' },
    });
    const [{ count }] = (await database.db.query<{ count: string }>(
      'SELECT count(*)::text AS count FROM sign_in_challenges WHERE input->>$1 = $2',
      ['address', wallet.address],
    )) as [{ count: string }];
    expect(count).toBe('0');
  });
});
