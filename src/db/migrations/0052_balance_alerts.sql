-- Balance alerts (docs/webhooks.md#balance-alerts): `balance.low` when a committed change takes the
-- balance from at or above a threshold to below it, `balance.depleted` when a paid request is first
-- refused with 402. The thresholds live on the account row, which every money movement already
-- updates and returns, so a movement that crosses nothing pays no statement of its own.

-- The account's low-balance thresholds, micro-USD (at most 3, PUT /account/alerts). NULL: the
-- default, 5.00 USD on a live account and none on a sandbox one (ledger/sql.ts THRESHOLDS).
ALTER TABLE accounts ADD COLUMN low_balance_micros bigint[];
-- Armed: the next 402 of a paid request makes a `balance.depleted`; the refusal disarms it, a
-- credit (deposit, refund, positive adjustment) arms it again.
ALTER TABLE accounts ADD COLUMN depleted_armed boolean NOT NULL DEFAULT true;

-- Each alert, written by the statement that crossed (or refused), so it commits with it; its event
-- is recorded from it once (emitted_at set in the event's transaction).
CREATE TABLE balance_alerts (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id       text NOT NULL REFERENCES accounts (id),
  kind             text NOT NULL CHECK (kind IN ('low', 'depleted')),
  -- `low`: the threshold crossed.
  threshold_micros bigint,
  -- The balance right after the crossing (`low`) or at the refusal (`depleted`).
  balance_micros   bigint NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  emitted_at       timestamptz,
  CHECK (kind <> 'low' OR threshold_micros IS NOT NULL)
);

CREATE INDEX balance_alerts_account ON balance_alerts (account_id, id);
CREATE INDEX balance_alerts_pending ON balance_alerts (id) WHERE emitted_at IS NULL;

-- The one-by-one pass of a coalesced batch (0004) also writes the crossings it makes: each account's
-- balance before the batch and after it, against its thresholds. Unchanged otherwise.
CREATE OR REPLACE FUNCTION ledger_charge_batch(
  p_accounts text[],
  p_amounts bigint[],
  p_operations text[],
  p_request_ids text[],
  p_key_ids text[]
) RETURNS TABLE (item integer, entry_id bigint, balance_after bigint)
LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  j integer := 1;
  acct_ids text[];
  balances bigint[];
  start_balances bigint[];
  ok_items integer[] := '{}';
  ok_balances bigint[] := '{}';
  ids bigint[];
BEGIN
  SELECT coalesce(array_agg(locked.id ORDER BY locked.id), '{}'),
         coalesce(array_agg(locked.balance_micros ORDER BY locked.id), '{}')
    INTO acct_ids, balances
    FROM (SELECT a.id, a.balance_micros FROM accounts a WHERE a.id = ANY (p_accounts) ORDER BY a.id FOR UPDATE) AS locked;
  start_balances := balances;

  FOR i IN SELECT s.n FROM generate_subscripts(p_accounts, 1) AS s(n) ORDER BY p_accounts[s.n], s.n LOOP
    IF p_amounts[i] IS NULL OR p_amounts[i] <= 0 THEN
      RAISE EXCEPTION 'ledger_charge_batch: item % has a non-positive amount', i;
    END IF;
    WHILE j <= cardinality(acct_ids) AND acct_ids[j] < p_accounts[i] LOOP
      j := j + 1;
    END LOOP;
    IF j <= cardinality(acct_ids) AND acct_ids[j] = p_accounts[i] AND balances[j] >= p_amounts[i] THEN
      balances[j] := balances[j] - p_amounts[i];
      ok_items := ok_items || i;
      ok_balances := ok_balances || balances[j];
    END IF;
  END LOOP;
  IF cardinality(ok_items) = 0 THEN
    RETURN;
  END IF;

  UPDATE accounts a SET balance_micros = u.balance
    FROM unnest(acct_ids, balances, start_balances) AS u(id, balance, start_balance)
   WHERE a.id = u.id AND u.balance <> u.start_balance;

  INSERT INTO balance_alerts (account_id, kind, threshold_micros, balance_micros)
  SELECT a.id, 'low', t.threshold, u.balance
    FROM unnest(acct_ids, balances, start_balances) AS u(id, balance, start_balance)
    JOIN accounts a ON a.id = u.id
   CROSS JOIN LATERAL unnest(COALESCE(a.low_balance_micros,
          CASE WHEN a.mode = 'live' THEN '{5000000}'::bigint[] ELSE '{}'::bigint[] END)) AS t(threshold)
   WHERE u.balance < t.threshold AND u.start_balance >= t.threshold;

  ids := ARRAY(
    SELECT nextval('ledger_entries_id_seq')
      FROM generate_series(1, cardinality(ok_items))
  );
  INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, operation, request_id, key_id)
  OVERRIDING SYSTEM VALUE
  SELECT ids[k], p_accounts[ok_items[k]], 'charge', -p_amounts[ok_items[k]], ok_balances[k],
         p_operations[ok_items[k]], p_request_ids[ok_items[k]], p_key_ids[ok_items[k]]
    FROM generate_series(1, cardinality(ok_items)) AS k;
  RETURN QUERY SELECT ok_items[k], ids[k], ok_balances[k] FROM generate_series(1, cardinality(ok_items)) AS k;
END
$$;
