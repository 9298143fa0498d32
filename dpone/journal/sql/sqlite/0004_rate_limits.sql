-- Distributed rate limits of a receiver account, shared by every process on this journal.
-- Keyed by the receiver's canonical authority origin and the remote principal, never by
-- environment or namespace: one physical account has one limit however its deliveries are
-- named. Every time is the database clock (strftime/julianday 'now').
--
-- A bucket holds the earliest time of the next request turn of one kind (a token bucket of
-- one token refilled every 60/per_minute seconds, in its virtual-scheduling form): a turn is
-- taken by moving next_turn_at one interval past max(next_turn_at, now).
CREATE TABLE rest_delivery_rate_bucket (
    authority       TEXT NOT NULL,
    principal       TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('submit', 'poll')),
    next_turn_at    TEXT NOT NULL,
    PRIMARY KEY (authority, principal, kind)
);

-- The active-request semaphore: one row per numbered slot (1..max_active_requests). A slot is
-- held while it is not released, its bound has not passed, and the mutation lease it was taken
-- under (operation_id, lease_token) is live: the run's lease heartbeat keeps it, and a killed
-- process frees it once that lease expires.
CREATE TABLE rest_delivery_active_request (
    authority       TEXT NOT NULL,
    principal       TEXT NOT NULL,
    slot            INTEGER NOT NULL CHECK (slot BETWEEN 1 AND 64),
    holder          TEXT NOT NULL,
    operation_id    TEXT NOT NULL,
    lease_token     INTEGER NOT NULL CHECK (lease_token >= 1),
    token           INTEGER NOT NULL CHECK (token >= 1),
    expires_at      TEXT NOT NULL,
    PRIMARY KEY (authority, principal, slot)
);
