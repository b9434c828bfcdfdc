-- Claims take due price checks and AI resolutions with limits of their own (docs/jobs.md#claims):
-- price checks in large batches, possibly a moment ahead of their time, AI resolutions up to the
-- workers' concurrency. Each kind is read in its own due order, so that a claim of AI resolutions
-- never walks past 100,000 due price checks to find none. The index by time alone served one claim
-- of both kinds; its readers (the next due time, `sibyl jobs list --due`) read this one by type.
CREATE INDEX scheduled_jobs_pending_by_type ON scheduled_jobs (job_type, scheduled_for) WHERE status = 'PENDING';
DROP INDEX scheduled_jobs_pending;
