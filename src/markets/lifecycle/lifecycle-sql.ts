import { statement } from '../../db/database.js';
import { wakeUp } from '../../queue/wake.js';

/** The NOTIFY channel of the lifecycle: ingestion wakes the worker when markets change. */
export const LIFECYCLE_CHANNEL = 'markets_lifecycle';

export const NOTIFY = wakeUp(LIFECYCLE_CHANNEL);

// Due: OPEN markets past closes_at, and markets this worker closed whose automatic resolution has
// not run yet (its worker died mid-way). Markets the platform itself set CLOSED or RESOLVING are the
// platform's to move on. A lease held by a live worker hides a market; a lapsed one does not.
const DUE = `(
    (m.status = 'OPEN' AND m.closes_at <= $1)
    OR (m.status IN ('CLOSED', 'RESOLVING') AND m.status_event LIKE 'lifecycle:%' AND NOT m.lifecycle_attempted
        AND m.resolution_type IN ('PRICE_FEED', 'AI'))
  ) AND (m.lifecycle_lease_until IS NULL OR m.lifecycle_lease_until <= $1)`;

export const CLAIM = statement(
  'markets_lifecycle_claim',
  `UPDATE markets
      SET lifecycle_lease_token = $3, lifecycle_lease_until = $1::timestamptz + make_interval(secs => $4::double precision / 1000)
    WHERE id IN (SELECT m.id FROM markets m WHERE ${DUE} ORDER BY m.closes_at LIMIT $2 FOR UPDATE SKIP LOCKED)
   RETURNING id, status, resolution_type, sandbox, closes_at, price_symbol, price_condition, price_target,
             price_tolerance, title, description, lifecycle_lease_token`,
);

export const NEXT_DUE = statement(
  'markets_lifecycle_next_due',
  `SELECT least(
     (SELECT min(closes_at) FROM markets WHERE status = 'OPEN' AND lifecycle_lease_until IS NULL),
     (SELECT min(lifecycle_lease_until) FROM markets WHERE lifecycle_lease_until IS NOT NULL)
   ) AS next`,
);

/** Locks the market for the final step, only for the worker that still holds its lease. */
export const LOCK_LEASED = statement(
  'markets_lifecycle_lock',
  `SELECT status FROM markets WHERE id = $1 AND lifecycle_lease_token = $2 FOR UPDATE`,
);

/**
 * Releases the lease; `attempted` ($3) marks an automatic resolution that ran. $4: not before this
 * time again (a market still OPEN after its closing was refused, because the platform's own newer
 * status stands), else null.
 */
export const RELEASE = statement(
  'markets_lifecycle_release',
  `UPDATE markets SET lifecycle_lease_token = NULL, lifecycle_lease_until = $4,
          lifecycle_attempted = lifecycle_attempted OR $3
    WHERE id = $1 AND lifecycle_lease_token = $2`,
);

export const NOTE_DETAILS = statement(
  'markets_lifecycle_note',
  `UPDATE markets SET resolution_details = COALESCE(resolution_details, '{}'::jsonb) || $2::jsonb WHERE id = $1`,
);

export const OUTCOME_LABELS = statement(
  'markets_outcome_labels',
  'SELECT label FROM market_outcomes WHERE market_id = $1 ORDER BY outcome_index',
);

/**
 * Keeps the official resolution's attestation (docs/attestations.md#which-resolution-is-official)
 * with the resolution event it signed, in the transaction that records that resolution.
 */
export const STORE_ATTESTATION = statement(
  'markets_lifecycle_attestation',
  `INSERT INTO market_resolution_attestations (market_id, resolution_event, attestation, votes)
   VALUES ($1, $2, $3::jsonb, $4::jsonb)
   ON CONFLICT (market_id) DO UPDATE
     SET resolution_event = EXCLUDED.resolution_event, attestation = EXCLUDED.attestation,
         votes = EXCLUDED.votes, created_at = now()`,
);
