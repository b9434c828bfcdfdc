-- Grounded resolution (docs/ai.md#evidence): each stored answer keeps what the model looked at, how
-- many web searches its provider reports, and why a "cannot determine" could not be determined.
--
-- evidence is the vote's checked list (at most 10 items, each capped: src/ai/evidence.ts), stored
-- as the vote shows it; the answers stored before it have none, and show an empty list. A constant
-- default adds the column without rewriting the table.

ALTER TABLE ai_votes
  ADD COLUMN evidence jsonb NOT NULL DEFAULT '[]',
  ADD COLUMN searches integer CHECK (searches >= 0),
  ADD COLUMN abstain_reason text
    CHECK (abstain_reason IN ('too_early', 'insufficient_evidence', 'ambiguous')),
  ADD CONSTRAINT ai_votes_evidence_is_array CHECK (jsonb_typeof(evidence) = 'array'),
  -- A reason only on a valid "cannot determine": never beside an outcome or a failure.
  ADD CONSTRAINT ai_votes_abstain_reason_alone
    CHECK (abstain_reason IS NULL OR (outcome_index IS NULL AND error_kind IS NULL));
