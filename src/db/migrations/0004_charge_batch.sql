-- Charges in batches (docs/performance.md): one round trip and one commit for many charges.
--
-- Every account of the batch is locked first, in id order, so batches from several API instances
-- cannot deadlock. Then the items are decided one by one, in arrival order within each account,
-- against the balance as it stands after the items before them: exactly what the same charges
-- would get one guarded statement at a time. Finally one UPDATE writes every changed balance and
-- one INSERT adds all the entries. Writing a hot row once per batch instead of once per charge is
-- what lifts the one-account ceiling (measured in docs/performance.md).
-- Entry ids are drawn in decision order while the locks are held, so within an account they
-- follow the running balance, as the reconciliation checks.
CREATE FUNCTION ledger_charge_batch(
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
  -- Lock every account of the batch in id order and read the balances, in one statement.
  SELECT coalesce(array_agg(locked.id ORDER BY locked.id), '{}'),
         coalesce(array_agg(locked.balance_micros ORDER BY locked.id), '{}')
    INTO acct_ids, balances
    FROM (SELECT a.id, a.balance_micros FROM accounts a WHERE a.id = ANY (p_accounts) ORDER BY a.id FOR UPDATE) AS locked;
  start_balances := balances;

  -- Decide in memory: items sorted by account (then arrival), walking the sorted accounts alongside.
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

  -- One statement updates every account that changed.
  UPDATE accounts a SET balance_micros = u.balance
    FROM unnest(acct_ids, balances, start_balances) AS u(id, balance, start_balance)
   WHERE a.id = u.id AND u.balance <> u.start_balance;

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
