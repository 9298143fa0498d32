-- The delivery journal: parents, children, attempts, observations, leases, effect-domain
-- locks, the replacement watermark interval map, remote-job capacity reservations, environment
-- epochs and mutation gates, and the audit trail. Additive only: later migrations expand.

-- btree_gist gives GiST operator classes to scalar columns, so one GiST index serves
-- "same effect-conflict domain AND overlapping scope". It lives in the public schema so that
-- several journal schemas in one database share it.
CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;

CREATE TABLE rest_delivery_environment (
    environment_id   text PRIMARY KEY,
    journal_epoch    bigint NOT NULL DEFAULT 0 CHECK (journal_epoch >= 0),
    mutation_gate    text NOT NULL DEFAULT 'OPEN' CHECK (mutation_gate IN ('OPEN', 'BLOCKED')),
    gate_reason      text,
    updated_by       text,
    updated_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE rest_delivery_parent (
    parent_id               text PRIMARY KEY,
    operation_namespace     text NOT NULL,
    tenant_id               text NOT NULL,
    environment_id          text NOT NULL,
    logical_route_id        text NOT NULL,
    plan_digest             text NOT NULL,
    parent_plan_digest      text NOT NULL,
    frozen_parent_digest    text NOT NULL,
    profile_contract_digest text NOT NULL,
    effect_conflict_domain  text NOT NULL,
    mutation_kind           text NOT NULL
        CHECK (mutation_kind IN ('partition_replace', 'incremental_append')),
    generation_end          timestamptz NOT NULL,
    correction_revision     integer NOT NULL CHECK (correction_revision >= 0),
    boundary                daterange NOT NULL,
    max_remote_jobs         integer NOT NULL CHECK (max_remote_jobs BETWEEN 1 AND 64),
    child_count             integer NOT NULL CHECK (child_count >= 0),
    checkpoint_frontier     integer NOT NULL DEFAULT 0 CHECK (checkpoint_frontier >= 0),
    admitted_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT rest_delivery_parent_plan_key UNIQUE (operation_namespace, parent_plan_digest)
);
CREATE INDEX rest_delivery_parent_scope_idx
    ON rest_delivery_parent (environment_id, tenant_id, operation_namespace);

CREATE TABLE rest_delivery_child (
    operation_id            text PRIMARY KEY,
    parent_id               text NOT NULL REFERENCES rest_delivery_parent (parent_id),
    ordinal                 integer NOT NULL CHECK (ordinal >= 1),
    operation_namespace     text NOT NULL,
    tenant_id               text NOT NULL,
    environment_id          text NOT NULL,
    delivery_key            text NOT NULL,
    receiver_mutation_key   text NOT NULL,
    mutation_intent_digest  text NOT NULL,
    effect_conflict_domain  text NOT NULL,
    mutation_kind           text NOT NULL,
    generation_end          timestamptz NOT NULL,
    correction_revision     integer NOT NULL CHECK (correction_revision >= 0),
    scope                   daterange NOT NULL CHECK (NOT isempty(scope)),
    first_row               bigint NOT NULL CHECK (first_row >= 0),
    row_count               bigint NOT NULL CHECK (row_count >= 0),
    payload_key             text NOT NULL,
    payload_digest          text NOT NULL,
    payload_document_key    text NOT NULL,
    wire_bytes              bigint NOT NULL CHECK (wire_bytes >= 0),
    state_name              text NOT NULL,
    execution_state         text NOT NULL,
    remote_effect           text NOT NULL,
    acknowledgement_state   text NOT NULL,
    verification_state      text NOT NULL,
    checkpoint_state        text NOT NULL,
    revision                bigint NOT NULL DEFAULT 0 CHECK (revision >= 0),
    journal_epoch           bigint NOT NULL DEFAULT 0 CHECK (journal_epoch >= 0),
    attempt_ordinal         integer NOT NULL DEFAULT 0 CHECK (attempt_ordinal >= 0),
    observation_ordinal     integer NOT NULL DEFAULT 0 CHECK (observation_ordinal >= 0),
    receipt                 jsonb,
    next_check_after        timestamptz,
    last_error_code         text,
    updated_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT rest_delivery_child_delivery_key UNIQUE (operation_namespace, delivery_key),
    CONSTRAINT rest_delivery_child_ordinal UNIQUE (parent_id, ordinal)
);
CREATE INDEX rest_delivery_child_overlap_idx
    ON rest_delivery_child USING gist (effect_conflict_domain, scope);
CREATE INDEX rest_delivery_child_scope_idx
    ON rest_delivery_child (environment_id, tenant_id, operation_namespace);

CREATE TABLE rest_delivery_attempt (
    attempt_id          text PRIMARY KEY,
    operation_id        text NOT NULL REFERENCES rest_delivery_child (operation_id),
    environment_id      text NOT NULL,
    attempt_ordinal     integer NOT NULL CHECK (attempt_ordinal >= 1),
    marker_key          text NOT NULL,
    marker_digest       text NOT NULL,
    expected_revision   bigint NOT NULL,
    journal_epoch       bigint NOT NULL,
    lease_holder        text NOT NULL,
    lease_token         bigint NOT NULL,
    started_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    outcome             text,
    outcome_at          timestamptz,
    CONSTRAINT rest_delivery_attempt_ordinal UNIQUE (operation_id, attempt_ordinal)
);

CREATE TABLE rest_delivery_observation (
    observation_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    operation_id        text NOT NULL REFERENCES rest_delivery_child (operation_id),
    environment_id      text NOT NULL,
    observation_ordinal integer NOT NULL,
    revision            bigint NOT NULL,
    transition_id       text NOT NULL,
    document            jsonb NOT NULL,
    observed_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX rest_delivery_observation_op_idx
    ON rest_delivery_observation (operation_id, observation_id);

CREATE TABLE rest_delivery_lease (
    operation_id    text NOT NULL,
    kind            text NOT NULL
        CHECK (kind IN ('mutation', 'observation', 'checkpoint', 'operator')),
    environment_id  text NOT NULL,
    holder          text NOT NULL,
    token           bigint NOT NULL CHECK (token >= 1),
    journal_epoch   bigint NOT NULL,
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (operation_id, kind)
);

CREATE TABLE rest_delivery_effect_domain_lock (
    effect_conflict_domain  text PRIMARY KEY,
    created_at              timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- The permanent replacement watermark: a normalized, non-overlapping interval map per domain.
CREATE TABLE rest_delivery_watermark (
    effect_conflict_domain  text NOT NULL,
    scope                   daterange NOT NULL CHECK (NOT isempty(scope)),
    generation_end          timestamptz NOT NULL,
    correction_revision     integer NOT NULL,
    operation_id            text NOT NULL,
    updated_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT rest_delivery_watermark_no_overlap
        EXCLUDE USING gist (effect_conflict_domain WITH =, scope WITH &&)
);

-- Remote-job capacity: one reservation per attempt, holding one of the domain's numbered slots.
CREATE TABLE rest_delivery_capacity_reservation (
    attempt_id              text PRIMARY KEY,
    operation_id            text NOT NULL,
    environment_id          text NOT NULL,
    effect_conflict_domain  text NOT NULL,
    slot                    integer NOT NULL CHECK (slot >= 1),
    reserved_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    released_at             timestamptz,
    release_reason          text
);
CREATE UNIQUE INDEX rest_delivery_capacity_active_slot
    ON rest_delivery_capacity_reservation (effect_conflict_domain, slot)
    WHERE released_at IS NULL;

CREATE TABLE rest_delivery_audit (
    audit_id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment_id      text NOT NULL,
    operation_namespace text,
    tenant_id           text,
    actor               text NOT NULL,
    operation_id        text NOT NULL,
    transition_id       text NOT NULL,
    from_state          text,
    to_state            text,
    revision            bigint,
    reconciliation_id   text,
    evidence_digest     text,
    digests             jsonb NOT NULL DEFAULT '{}'::jsonb,
    at                  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX rest_delivery_audit_op_idx ON rest_delivery_audit (operation_id, audit_id);
