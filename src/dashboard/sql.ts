import { statement } from '../db/database.js';

/** A session unused this long ends (docs/dashboard.md#sessions); sessions.ts and the idle prune read it. */
export const SESSION_IDLE_HOURS = 12;

// `purpose` (migration 0025): 'sign-in', or 'link' with the account that asked to link a wallet.
export const INSERT_CHALLENGE = `
  INSERT INTO sign_in_challenges (nonce, input, created_at, expires_at, purpose, account_id)
  VALUES ($1, $2, $3, $4, $5, $6)`;

export const FIND_CHALLENGE = `
  SELECT nonce, input, expires_at, used_at, purpose, account_id FROM sign_in_challenges WHERE nonce = $1`;

// The nonce is spent by the transaction that creates the session: of two verifications of one
// signed message racing, one updates the row and the other finds it used.
export const USE_CHALLENGE = `
  UPDATE sign_in_challenges SET used_at = $2 WHERE nonce = $1 AND used_at IS NULL RETURNING nonce`;

// First sign-ins of one wallet queue on this lock, so two at once create one pair of accounts: the
// second finds the first's row once it commits. (A unique violation would abort the transaction
// that also spent the second's nonce.)
export const LOCK_WALLET = `SELECT pg_advisory_xact_lock(hashtextextended('dashboard-wallet:' || $1, 0))`;

export const FIND_WALLET = `
  SELECT address, live_account_id, sandbox_account_id FROM dashboard_wallets WHERE address = $1`;

export const FIND_ACCOUNT_BY_WALLET = `SELECT id, mode FROM accounts WHERE wallet_address = $1`;

export const INSERT_WALLET = `
  INSERT INTO dashboard_wallets (address, live_account_id, sandbox_account_id, created_at)
  VALUES ($1, $2, $3, $4)`;

export const INSERT_SESSION = `
  INSERT INTO dashboard_sessions (id, token_hash, wallet_address, created_at, last_seen_at, expires_at)
  VALUES ($1, $2, $3, $4, $4, $5)`;

// Reading a session is also what keeps it alive: one statement checks both lifetimes and moves
// last_seen_at, so an idle session ends 12 hours after its last request on any instance.
export const TOUCH_SESSION = statement(
  'dashboard_touch_session',
  `WITH touched AS (
     UPDATE dashboard_sessions SET last_seen_at = $2
      WHERE token_hash = $1 AND expires_at > $2 AND last_seen_at > $3
     RETURNING id, wallet_address, created_at, last_seen_at, expires_at
   )
   SELECT t.id, t.wallet_address, t.created_at, t.last_seen_at, t.expires_at,
          w.live_account_id, w.sandbox_account_id
     FROM touched t JOIN dashboard_wallets w ON w.address = t.wallet_address`,
);

export const DELETE_SESSION = 'DELETE FROM dashboard_sessions WHERE token_hash = $1';

/**
 * Retention (src/retention/tables.ts, docs/operations.md#retention): `$1` the cutoff, `$2` the batch size. A session
 * ends at its absolute expiry or 12 idle hours after its last request, whichever comes first; each
 * is found through its own index.
 */
export const PRUNE_EXPIRED_SESSIONS = statement(
  'dashboard_prune_expired_sessions',
  `WITH doomed AS (
     SELECT id FROM dashboard_sessions WHERE expires_at < $1
      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
   ), deleted AS (
     DELETE FROM dashboard_sessions WHERE id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1
   )
   SELECT count(*) AS deleted FROM deleted`,
);

export const PRUNE_IDLE_SESSIONS = statement(
  'dashboard_prune_idle_sessions',
  `WITH doomed AS (
     SELECT id FROM dashboard_sessions WHERE last_seen_at < $1::timestamptz - interval '${SESSION_IDLE_HOURS} hours'
      ORDER BY last_seen_at LIMIT $2 FOR UPDATE SKIP LOCKED
   ), deleted AS (
     DELETE FROM dashboard_sessions WHERE id = ANY (ARRAY(SELECT id FROM doomed)) RETURNING 1
   )
   SELECT count(*) AS deleted FROM deleted`,
);

export const PRUNE_CHALLENGES = statement(
  'dashboard_prune_challenges',
  `WITH doomed AS (
     SELECT nonce FROM sign_in_challenges WHERE expires_at < $1
      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
   ), deleted AS (
     DELETE FROM sign_in_challenges WHERE nonce = ANY (ARRAY(SELECT nonce FROM doomed)) RETURNING 1
   )
   SELECT count(*) AS deleted FROM deleted`,
);

// Drawn once per account: a concurrent first read keeps whichever reference was stored first.
export const DEPOSIT_REFERENCE = `
  UPDATE accounts SET deposit_reference = COALESCE(deposit_reference, $2) WHERE id = $1
  RETURNING deposit_reference`;
