import { statement } from '../db/database.js';
import { pruneStatement } from '../db/prune.js';

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

export const INSERT_SESSION = `
  INSERT INTO dashboard_sessions (id, token_hash, wallet_address, created_at, last_seen_at, expires_at)
  VALUES ($1, $2, $3, $4, $4, $5)`;

// Reading a session is also what keeps it alive: one statement checks both lifetimes ($3: 12 idle
// hours before now, $2) and moves last_seen_at, so an idle session ends 12 hours after its last
// request on any instance. The move is written at most once a minute ($4: a minute before now): an
// open event stream reads its session every second (docs/dashboard.md#sessions), and a row written
// every second per stream would be a write per stream a second for nothing. Its wallet's accounts are
// the accounts room's (signInWallet).
export const TOUCH_SESSION = statement(
  'dashboard_touch_session',
  `WITH live AS (
     SELECT id, wallet_address, created_at, last_seen_at, expires_at FROM dashboard_sessions
      WHERE token_hash = $1 AND expires_at > $2 AND last_seen_at > $3
   ), touched AS (
     UPDATE dashboard_sessions s SET last_seen_at = $2
       FROM live
      WHERE s.id = live.id AND live.last_seen_at <= $4
     RETURNING s.last_seen_at
   )
   SELECT id, wallet_address, created_at, coalesce((SELECT last_seen_at FROM touched), last_seen_at) AS last_seen_at,
          expires_at
     FROM live`,
);

export const DELETE_SESSION = 'DELETE FROM dashboard_sessions WHERE token_hash = $1';

/**
 * Retention (pruned by src/retention, listed in dashboard/feature.ts; docs/operations.md#retention): `$1` the cutoff, `$2` the batch size. A session
 * ends at its absolute expiry or 12 idle hours after its last request, whichever comes first; each
 * is found through its own index.
 */
export const PRUNE_EXPIRED_SESSIONS = pruneStatement({
  name: 'dashboard_prune_expired_sessions',
  table: 'dashboard_sessions',
  key: 'id',
  ended: 'expires_at < $1',
  orderBy: 'expires_at',
});

export const PRUNE_IDLE_SESSIONS = pruneStatement({
  name: 'dashboard_prune_idle_sessions',
  table: 'dashboard_sessions',
  key: 'id',
  ended: `last_seen_at < $1::timestamptz - interval '${SESSION_IDLE_HOURS} hours'`,
  orderBy: 'last_seen_at',
});

export const PRUNE_CHALLENGES = pruneStatement({
  name: 'dashboard_prune_challenges',
  table: 'sign_in_challenges',
  key: 'nonce',
  ended: 'expires_at < $1',
  orderBy: 'expires_at',
});
