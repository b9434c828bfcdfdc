-- Grounded resolution (docs/ai.md#web-search): each stored answer says whether the model was offered
-- its provider's web search: 'on', 'off' (AI_WEB_SEARCH or the slot's AI_MODEL_n_WEB_SEARCH turned
-- it off, or an evaluation ran without it) or 'unavailable' (the slot's provider has none, as a
-- plain OpenAI-compatible endpoint).
--
-- The answers stored before it, and an abandoned model's, are null: what their calls were offered
-- is not known (a null `searches` is also a failure's, so it cannot be derived). A column without a
-- default adds no rewrite of the table.

ALTER TABLE ai_votes
  ADD COLUMN search text CHECK (search IN ('on', 'off', 'unavailable'));
