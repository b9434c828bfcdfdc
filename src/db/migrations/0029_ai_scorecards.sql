-- Published AI scorecards (docs/ai.md#the-published-scorecard): `sibyl ai evaluate --publish` adds
-- one row with the evaluation's summary; GET /ai/scorecard answers the newest. Few and small, kept.
CREATE TABLE ai_scorecards (
  id bigserial PRIMARY KEY,
  published_at timestamptz NOT NULL DEFAULT now(),
  summary jsonb NOT NULL
);
CREATE INDEX ai_scorecards_latest ON ai_scorecards (published_at DESC, id DESC);
