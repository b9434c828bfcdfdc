-- Charges in batches (docs/performance.md): one round trip and one commit for many charges.
--
-- Each item is applied in turn with the same guarded UPDATE as a single charge, so each succeeds
-- or fails on its own against the balance as it stands after the items before it. Items are taken
-- in account-id order (arrival order within an account): batches from several API instances lock
-- account rows in the same order and cannot deadlock. Returns one row per successful item.
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
  new_balance bigint;
  new_entry bigint;
BEGIN
  FOR i IN SELECT s.n FROM generate_subscripts(p_accounts, 1) AS s(n) ORDER BY p_accounts[s.n], s.n LOOP
    IF p_amounts[i] <= 0 THEN
      RAISE EXCEPTION 'ledger_charge_batch: item % has a non-positive amount', i;
    END IF;
    UPDATE accounts SET balance_micros = balance_micros - p_amounts[i]
     WHERE id = p_accounts[i] AND balance_micros >= p_amounts[i]
    RETURNING balance_micros INTO new_balance;
    IF FOUND THEN
      INSERT INTO ledger_entries (account_id, kind, amount_micros, balance_after_micros, operation, request_id, key_id)
      VALUES (p_accounts[i], 'charge', -p_amounts[i], new_balance, p_operations[i], p_request_ids[i], p_key_ids[i])
      RETURNING id INTO new_entry;
      item := i;
      entry_id := new_entry;
      balance_after := new_balance;
      RETURN NEXT;
    END IF;
  END LOOP;
END
$$;
