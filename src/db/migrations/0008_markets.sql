-- Prediction-market data behind GET /markets and GET /markets/:id (docs/markets.md).
--
-- The platform owns the data; it reaches these tables only through ingestion events, each recorded
-- in market_events so a repeated event is recognised. Units: shares are integer base units (one
-- unit pays 1 lamport if its outcome wins), wagers and stakes are lamports, prices are basis
-- points (0-10,000). Every row that an event may later change keeps the `at` (and event id) of the
-- event that last set it: a change applies only when its (at, event id) is newer, so events may
-- arrive in any order and a repeated old event never undoes a newer one.

-- Every ingested event id, with the SHA-256 of its canonical body: the same id again with the same
-- body is skipped, with a different body refused.
CREATE TABLE market_events (
  id          text PRIMARY KEY,
  type        text NOT NULL,
  body_sha256 bytea NOT NULL,
  at          timestamptz NOT NULL,
  ingested_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE market_creators (
  wallet      text PRIMARY KEY,
  username    text,
  -- The `at` of the event whose username is kept (the newest).
  username_at timestamptz NOT NULL
);

CREATE TABLE markets (
  id                  text PRIMARY KEY,
  slug                text NOT NULL UNIQUE,
  title               text NOT NULL,
  description         text NOT NULL,
  category            text NOT NULL,
  image_url           text,
  market_type         text NOT NULL CHECK (market_type IN ('BINARY', 'CATEGORICAL')),
  outcome_count       integer NOT NULL CHECK (outcome_count BETWEEN 2 AND 20),
  closes_at           timestamptz NOT NULL,
  fee_bps             integer NOT NULL CHECK (fee_bps BETWEEN 0 AND 10000),
  lock_period_seconds integer NOT NULL CHECK (lock_period_seconds >= 0),
  creator_wallet      text NOT NULL REFERENCES market_creators (wallet),
  resolution_type     text NOT NULL CHECK (resolution_type IN ('PRICE_FEED', 'AI', 'ADMIN', 'MANUAL_VOTE')),
  -- PRICE_FEED markets only: outcome 0 wins when the VWAP of `price_symbol` ends beyond the target.
  price_symbol        text,
  price_condition     text CHECK (price_condition IN ('above', 'below')),
  price_target        double precision,
  price_tolerance     double precision,
  -- Sandbox markets price from the sandbox feed and resolve with the sandbox models.
  sandbox             boolean NOT NULL DEFAULT false,
  status              text NOT NULL CHECK (status IN ('DRAFT', 'OPEN', 'CLOSED', 'RESOLVING', 'FINALIZED', 'CANCELLED')),
  status_at           timestamptz NOT NULL,
  status_event        text NOT NULL,
  winning_outcome_index integer,
  resolved_at         timestamptz,
  resolution_at       timestamptz,
  resolution_event    text,
  -- What resolution.details shows: the transitions and how the market was resolved.
  resolution_details  jsonb,
  -- The `at` of the market.created event.
  created_at          timestamptz NOT NULL,
  CHECK ((resolution_type = 'PRICE_FEED') = (price_symbol IS NOT NULL)),
  CHECK (winning_outcome_index IS NULL OR winning_outcome_index BETWEEN 0 AND outcome_count - 1)
);

-- The list: newest first then id, optionally by status and/or category, never DRAFT.
CREATE INDEX markets_list ON markets (created_at DESC, id) WHERE status <> 'DRAFT';
CREATE INDEX markets_list_status ON markets (status, created_at DESC, id);
CREATE INDEX markets_list_category ON markets (category, created_at DESC, id) WHERE status <> 'DRAFT';
-- Both filters: the total is an index-only count (0.15 ms for 668 of 10,000 markets, where the
-- category index and a status filter on the rows took 2.3 ms), the page an ordered range.
CREATE INDEX markets_list_status_category ON markets (status, category, created_at DESC, id);
-- The creator's reputation counts their markets by status.
CREATE INDEX markets_creator ON markets (creator_wallet, status);

CREATE TABLE market_outcomes (
  market_id     text NOT NULL REFERENCES markets (id),
  outcome_index integer NOT NULL CHECK (outcome_index >= 0),
  label         text NOT NULL,
  PRIMARY KEY (market_id, outcome_index)
);

-- Orders: `open_shares` is what is still on the book (0 once filled or cancelled).
CREATE TABLE market_orders (
  order_id      text PRIMARY KEY,
  market_id     text NOT NULL,
  outcome_index integer NOT NULL,
  wallet        text NOT NULL,
  side          text NOT NULL CHECK (side IN ('bid', 'ask')),
  price         integer NOT NULL CHECK (price BETWEEN 0 AND 10000),
  shares        bigint NOT NULL CHECK (shares > 0),
  open_shares   bigint NOT NULL CHECK (open_shares >= 0 AND open_shares <= shares),
  state         text NOT NULL CHECK (state IN ('open', 'filled', 'cancelled')),
  placed_at     timestamptz NOT NULL,
  state_at      timestamptz NOT NULL,
  state_event   text NOT NULL,
  FOREIGN KEY (market_id, outcome_index) REFERENCES market_outcomes (market_id, outcome_index)
);

-- The orderbook aggregates open orders per (outcome, side, price): an index-only range scan of the
-- open orders of one market, however many filled and cancelled ones it has.
CREATE INDEX market_orders_book ON market_orders (market_id, outcome_index, side, price)
  INCLUDE (open_shares) WHERE open_shares > 0;

CREATE TABLE market_trades (
  trade_id      text PRIMARY KEY,
  market_id     text NOT NULL,
  outcome_index integer NOT NULL,
  price         integer NOT NULL CHECK (price BETWEEN 0 AND 10000),
  shares        bigint NOT NULL CHECK (shares > 0),
  buyer         text NOT NULL,
  seller        text NOT NULL,
  at            timestamptz NOT NULL,
  FOREIGN KEY (market_id, outcome_index) REFERENCES market_outcomes (market_id, outcome_index)
);

-- The last 24 hours' volume sums shares × price of a market's recent trades from the index.
CREATE INDEX market_trades_market_at ON market_trades (market_id, at) INCLUDE (shares, price);
-- An outcome's last price: the first entry of this index.
CREATE INDEX market_trades_last ON market_trades (market_id, outcome_index, at DESC, trade_id DESC)
  INCLUDE (price);

-- Each market's trade count and Σ shares × price (basis points × base units), kept by the statement
-- that records trades. Trades never change once recorded, so the totals are exact; summing 100,000
-- trades at read time cost 17-32 ms of PostgreSQL (docs/performance.md), reading this row nothing.
CREATE TABLE market_trade_totals (
  market_id text PRIMARY KEY REFERENCES markets (id),
  trades    bigint NOT NULL CHECK (trades >= 0),
  notional  numeric NOT NULL CHECK (notional >= 0)
);

-- Distinct wallets that ever traded in a market, kept by trade ingestion, so counting bettors does
-- not scan every trade twice (buyer and seller).
CREATE TABLE market_traders (
  market_id text NOT NULL REFERENCES markets (id),
  wallet    text NOT NULL,
  PRIMARY KEY (market_id, wallet)
);

-- A holder's totals now, per outcome; shares = 0 keeps the row so an older event cannot revive it.
CREATE TABLE market_positions (
  market_id     text NOT NULL,
  wallet        text NOT NULL,
  outcome_index integer NOT NULL,
  shares        bigint NOT NULL CHECK (shares >= 0),
  wagered       bigint NOT NULL CHECK (wagered >= 0),
  at            timestamptz NOT NULL,
  event_id      text NOT NULL,
  PRIMARY KEY (market_id, wallet, outcome_index),
  FOREIGN KEY (market_id, outcome_index) REFERENCES market_outcomes (market_id, outcome_index)
);

-- A curator's total stake now; amount = 0 (removed) keeps the row for the same reason.
CREATE TABLE market_stakes (
  market_id text NOT NULL REFERENCES markets (id),
  wallet    text NOT NULL,
  username  text,
  amount    bigint NOT NULL CHECK (amount >= 0),
  at        timestamptz NOT NULL,
  event_id  text NOT NULL,
  PRIMARY KEY (market_id, wallet)
);

-- Top curators: largest stakes first, ties to the earlier stake, then the wallet.
CREATE INDEX market_stakes_top ON market_stakes (market_id, amount DESC, at, wallet) WHERE amount > 0;
