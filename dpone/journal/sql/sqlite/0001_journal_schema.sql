-- The local-development delivery journal: parents, children, attempts, observations, leases,
-- the replacement watermark interval map, remote-job capacity reservations, environment epochs
-- and mutation gates, and the audit trail. Additive only: later migrations expand.
--
-- Dates are ISO 'YYYY-MM-DD' text (so text order is date order); timestamps are ISO-8601 UTC
-- text written by the database clock (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) and compared with
-- julianday(). Scopes are half-open [scope_from, scope_to). There is no effect-domain lock
-- table: every writing transaction is BEGIN IMMEDIATE, so the database write lock linearizes
-- admission and the pre-submit critical transaction.

CREATE TABLE rest_delivery_environment (
    environment_id   TEXT PRIMARY KEY,
    journal_epoch    INTEGER NOT NULL DEFAULT 0 CHECK (journal_epoch >= 0),
    mutation_gate    TEXT NOT NULL DEFAULT 'OPEN' CHECK (mutation_gate IN ('OPEN', 'BLOCKED')),
    gate_reason      TEXT,
    updated_by       TEXT,
    updated_at       TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE rest_delivery_parent (
    parent_id               TEXT PRIMARY KEY,
    operation_namespace     TEXT NOT NULL,
    tenant_id               TEXT NOT NULL,
    environment_id          TEXT NOT NULL,
    logical_route_id        TEXT NOT NULL,
    plan_digest             TEXT NOT NULL,
    parent_plan_digest      TEXT NOT NULL,
    frozen_parent_digest    TEXT NOT NULL,
    profile_contract_digest TEXT NOT NULL,
    effect_conflict_domain  TEXT NOT NULL,
    mutation_kind           TEXT NOT NULL
        CHECK (mutation_kind IN ('partition_replace', 'incremental_append')),
    generation_end          TEXT NOT NULL,
    correction_revision     INTEGER NOT NULL CHECK (correction_revision >= 0),
    boundary_from           TEXT NOT NULL,
    boundary_to             TEXT NOT NULL,
    max_remote_jobs         INTEGER NOT NULL CHECK (max_remote_jobs BETWEEN 1 AND 64),
    child_count             INTEGER NOT NULL CHECK (child_count >= 0),
    checkpoint_frontier     INTEGER NOT NULL DEFAULT 0 CHECK (checkpoint_frontier >= 0),
    admitted_at             TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT rest_delivery_parent_boundary CHECK (boundary_from < boundary_to),
    CONSTRAINT rest_delivery_parent_plan_key UNIQUE (operation_namespace, parent_plan_digest)
);
CREATE INDEX rest_delivery_parent_scope_idx
    ON rest_delivery_parent (environment_id, tenant_id, operation_namespace);

CREATE TABLE rest_delivery_child (
    operation_id            TEXT PRIMARY KEY,
    parent_id               TEXT NOT NULL REFERENCES rest_delivery_parent (parent_id),
    ordinal                 INTEGER NOT NULL CHECK (ordinal >= 1),
    operation_namespace     TEXT NOT NULL,
    tenant_id               TEXT NOT NULL,
    environment_id          TEXT NOT NULL,
    delivery_key            TEXT NOT NULL,
    receiver_mutation_key   TEXT NOT NULL,
    mutation_intent_digest  TEXT NOT NULL,
    effect_conflict_domain  TEXT NOT NULL,
    mutation_kind           TEXT NOT NULL,
    generation_end          TEXT NOT NULL,
    correction_revision     INTEGER NOT NULL CHECK (correction_revision >= 0),
    scope_from              TEXT NOT NULL,
    scope_to                TEXT NOT NULL,
    first_row               INTEGER NOT NULL CHECK (first_row >= 0),
    row_count               INTEGER NOT NULL CHECK (row_count >= 0),
    payload_key             TEXT NOT NULL,
    payload_digest          TEXT NOT NULL,
    payload_document_key    TEXT NOT NULL,
    wire_bytes              INTEGER NOT NULL CHECK (wire_bytes >= 0),
    state_name              TEXT NOT NULL,
    execution_state         TEXT NOT NULL,
    remote_effect           TEXT NOT NULL,
    acknowledgement_state   TEXT NOT NULL,
    verification_state      TEXT NOT NULL,
    checkpoint_state        TEXT NOT NULL,
    revision                INTEGER NOT NULL DEFAULT 0 CHECK (revision >= 0),
    journal_epoch           INTEGER NOT NULL DEFAULT 0 CHECK (journal_epoch >= 0),
    attempt_ordinal         INTEGER NOT NULL DEFAULT 0 CHECK (attempt_ordinal >= 0),
    observation_ordinal     INTEGER NOT NULL DEFAULT 0 CHECK (observation_ordinal >= 0),
    receipt                 TEXT CHECK (receipt IS NULL OR json_valid(receipt)),
    next_check_after        TEXT,
    last_error_code         TEXT,
    updated_at              TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT rest_delivery_child_scope CHECK (scope_from < scope_to),
    CONSTRAINT rest_delivery_child_delivery_key UNIQUE (operation_namespace, delivery_key),
    CONSTRAINT rest_delivery_child_ordinal UNIQUE (parent_id, ordinal)
);
-- Overlap lookups: same domain, then the comparison scope_from < hi AND lo < scope_to.
CREATE INDEX rest_delivery_child_overlap_idx
    ON rest_delivery_child (effect_conflict_domain, scope_from, scope_to);
CREATE INDEX rest_delivery_child_scope_idx
    ON rest_delivery_child (environment_id, tenant_id, operation_namespace);

CREATE TABLE rest_delivery_attempt (
    attempt_id          TEXT PRIMARY KEY,
    operation_id        TEXT NOT NULL REFERENCES rest_delivery_child (operation_id),
    environment_id      TEXT NOT NULL,
    attempt_ordinal     INTEGER NOT NULL CHECK (attempt_ordinal >= 1),
    marker_key          TEXT NOT NULL,
    marker_digest       TEXT NOT NULL,
    expected_revision   INTEGER NOT NULL,
    journal_epoch       INTEGER NOT NULL,
    lease_holder        TEXT NOT NULL,
    lease_token         INTEGER NOT NULL,
    started_at          TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    outcome             TEXT,
    outcome_at          TEXT,
    CONSTRAINT rest_delivery_attempt_ordinal UNIQUE (operation_id, attempt_ordinal)
);

CREATE TABLE rest_delivery_observation (
    observation_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    operation_id        TEXT NOT NULL REFERENCES rest_delivery_child (operation_id),
    environment_id      TEXT NOT NULL,
    observation_ordinal INTEGER NOT NULL,
    revision            INTEGER NOT NULL,
    transition_id       TEXT NOT NULL,
    document            TEXT NOT NULL CHECK (json_valid(document)),
    observed_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX rest_delivery_observation_op_idx
    ON rest_delivery_observation (operation_id, observation_id);

CREATE TABLE rest_delivery_lease (
    operation_id    TEXT NOT NULL,
    kind            TEXT NOT NULL
        CHECK (kind IN ('mutation', 'observation', 'checkpoint', 'operator')),
    environment_id  TEXT NOT NULL,
    holder          TEXT NOT NULL,
    token           INTEGER NOT NULL CHECK (token >= 1),
    journal_epoch   INTEGER NOT NULL,
    expires_at      TEXT NOT NULL,
    PRIMARY KEY (operation_id, kind)
);

-- The permanent replacement watermark: a normalized, non-overlapping interval map per domain.
CREATE TABLE rest_delivery_watermark (
    effect_conflict_domain  TEXT NOT NULL,
    scope_from              TEXT NOT NULL,
    scope_to                TEXT NOT NULL,
    generation_end          TEXT NOT NULL,
    correction_revision     INTEGER NOT NULL,
    operation_id            TEXT NOT NULL,
    updated_at              TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    CONSTRAINT rest_delivery_watermark_scope CHECK (scope_from < scope_to),
    PRIMARY KEY (effect_conflict_domain, scope_from)
);
-- SQLite has no exclusion constraint: a trigger refuses an overlapping interval instead.
CREATE TRIGGER rest_delivery_watermark_no_overlap
BEFORE INSERT ON rest_delivery_watermark
WHEN EXISTS (
    SELECT 1 FROM rest_delivery_watermark w
     WHERE w.effect_conflict_domain = NEW.effect_conflict_domain
       AND w.scope_from < NEW.scope_to AND NEW.scope_from < w.scope_to)
BEGIN
    SELECT RAISE(ABORT, 'rest_delivery_watermark_no_overlap');
END;

-- Remote-job capacity: one reservation per attempt, holding one of the domain's numbered slots.
CREATE TABLE rest_delivery_capacity_reservation (
    attempt_id              TEXT PRIMARY KEY,
    operation_id            TEXT NOT NULL,
    environment_id          TEXT NOT NULL,
    effect_conflict_domain  TEXT NOT NULL,
    slot                    INTEGER NOT NULL CHECK (slot >= 1),
    reserved_at             TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    released_at             TEXT,
    release_reason          TEXT
);
CREATE UNIQUE INDEX rest_delivery_capacity_active_slot
    ON rest_delivery_capacity_reservation (effect_conflict_domain, slot)
    WHERE released_at IS NULL;

CREATE TABLE rest_delivery_audit (
    audit_id            INTEGER PRIMARY KEY AUTOINCREMENT,
    environment_id      TEXT NOT NULL,
    operation_namespace TEXT,
    tenant_id           TEXT,
    actor               TEXT NOT NULL,
    operation_id        TEXT NOT NULL,
    transition_id       TEXT NOT NULL,
    from_state          TEXT,
    to_state            TEXT,
    revision            INTEGER,
    reconciliation_id   TEXT,
    evidence_digest     TEXT,
    digests             TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(digests)),
    at                  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX rest_delivery_audit_op_idx ON rest_delivery_audit (operation_id, audit_id);
