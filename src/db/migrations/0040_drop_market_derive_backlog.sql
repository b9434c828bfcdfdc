-- Migration 0038 made market_derive_backlog for candles written after their chunk's transaction; that
-- design was replaced the same night, before any release, by larger chunks whose own transaction writes
-- them (docs/performance.md#chunks-of-5000). Nothing uses the table any more.
DROP TABLE market_derive_backlog;
