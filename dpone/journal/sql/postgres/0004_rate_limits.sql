-- Distributed rate limits of a receiver account, shared by every process on this journal.
-- Keyed by the receiver's canonical authority origin and the remote principal, never by
-- environment or namespace: one physical account has one limit however its deliveries are
-- named. Every time is the database clock (clock_timestamp()).
--
-- A bucket holds the earliest time of the next request turn of one kind (a token bucket of
-- one token refilled every 60/per_minute seconds, in its virtual-scheduling form): a turn is
-- taken by moving next_turn_at one interval past max(next_turn_at, now), under the bucket
-- row's lock.
CREATE TABLE rest_delivery_rate_bucket (
    authority       text NOT NULL,
    principal       text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('submit', 'poll')),
    next_turn_at    timestamptz NOT NULL,
    PRIMARY KEY (authority, principal, kind)
);

-- The active-request semaphore: one row per numbered slot (1..max_active_requests). A slot is
-- held while it is not released, its bound has not passed, and the mutation lease it was taken
-- under (operation_id, lease_token) is live: the run's lease heartbeat keeps it, and a killed
-- process frees it once that lease expires.
-- Slots are claimed only under the lock of the scope's submit bucket row.
CREATE TABLE rest_delivery_active_request (
    authority       text NOT NULL,
    principal       text NOT NULL,
    slot            integer NOT NULL CHECK (slot BETWEEN 1 AND 64),
    holder          text NOT NULL,
    operation_id    text NOT NULL,
    lease_token     bigint NOT NULL CHECK (lease_token >= 1),
    token           bigint NOT NULL CHECK (token >= 1),
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (authority, principal, slot)
);
