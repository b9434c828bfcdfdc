-- An AI request's context as it was sent (docs/attestations.md#the-message): NULL when the request gave
-- none, '' when it gave "". Until now both were stored as '' and signed as absent (null in the canonical
-- question), so the existing '' rows become NULL: they keep meaning what their attestations signed.
ALTER TABLE ai_requests
  ALTER COLUMN context DROP NOT NULL,
  ALTER COLUMN context DROP DEFAULT;
UPDATE ai_requests SET context = NULL WHERE context = '';
