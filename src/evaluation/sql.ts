/** The published scorecards (migration 0029_ai_scorecards.sql): one row per `--publish`. */
export const INSERT_SCORECARD = `
  INSERT INTO ai_scorecards (summary) VALUES ($1::jsonb) RETURNING id::text AS id, published_at`;

export const LATEST_SCORECARD = `
  SELECT summary, published_at FROM ai_scorecards ORDER BY published_at DESC, id DESC LIMIT 1`;
