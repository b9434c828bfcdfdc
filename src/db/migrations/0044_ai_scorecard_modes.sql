-- One published AI scorecard per mode (docs/ai.md#the-published-scorecard): GET /ai/scorecard answers
-- the newest of the caller's mode, so a sandbox evaluation published never becomes the live one.
-- Existing rows take the mode their summary records (every summary has had one); live if none.
ALTER TABLE ai_scorecards ADD COLUMN mode text;
UPDATE ai_scorecards SET mode = COALESCE(summary->>'mode', 'live');
ALTER TABLE ai_scorecards
  ALTER COLUMN mode SET NOT NULL,
  ADD CONSTRAINT ai_scorecards_mode CHECK (mode IN ('live', 'sandbox'));
DROP INDEX ai_scorecards_latest;
CREATE INDEX ai_scorecards_latest ON ai_scorecards (mode, published_at DESC, id DESC);
