-- Linking another wallet to an account (docs/dashboard.md#your-wallets) is proven the way sign-in
-- is: a SIWS input the server stores, signed by the wallet being linked. The challenge records what
-- it is for, so a sign-in input never links a wallet and a link input never signs in, and, for a
-- link, the account that asked: a signed link message is good for that account only.
ALTER TABLE sign_in_challenges
  ADD COLUMN purpose text NOT NULL DEFAULT 'sign-in' CHECK (purpose IN ('sign-in', 'link')),
  ADD COLUMN account_id text REFERENCES accounts (id),
  ADD CONSTRAINT sign_in_challenges_link_account CHECK ((purpose = 'link') = (account_id IS NOT NULL));
