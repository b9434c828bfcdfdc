/**
 * The published scorecards (migrations 0029_ai_scorecards.sql, 0044_ai_scorecard_modes.sql): one
 * row per `--publish`, of the mode its models were (live or sandbox).
 */
export const INSERT_SCORECARD = `
  INSERT INTO ai_scorecards (mode, summary) VALUES ($1, $2::jsonb)
  RETURNING id::text AS id, published_at`;

/** The newest of one mode: a sandbox scorecard is never the live one. */
export const LATEST_SCORECARD = `
  SELECT summary, published_at FROM ai_scorecards WHERE mode = $1
  ORDER BY published_at DESC, id DESC LIMIT 1`;
