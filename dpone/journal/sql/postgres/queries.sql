-- Named queries of the PostgreSQL delivery journal, loaded by name (dpone.journal._sql).
-- Every operation query is scoped by environment_id; effect-domain fence queries are scoped by
-- the physical effect-conflict domain on purpose (namespaces cannot hide one physical effect).

-- name: migration_lock
-- One database-wide key (the ASCII of "dponemig"): migrations never run concurrently.
SELECT pg_advisory_xact_lock(7237407121123141991);

-- name: migration_table
CREATE TABLE IF NOT EXISTS dpone_schema_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    checksum    text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- name: migration_applied
SELECT version, name, checksum FROM dpone_schema_migrations ORDER BY version;

-- name: migration_record
INSERT INTO dpone_schema_migrations (version, name, checksum)
VALUES (%(version)s, %(name)s, %(checksum)s);

-- name: clock_now
SELECT clock_timestamp() AS now;

-- name: durability_remote_apply
SET LOCAL synchronous_commit = remote_apply;

-- name: commit_unsynced
SET LOCAL synchronous_commit = off;

-- name: durability_setting
SELECT current_setting('synchronous_commit') AS synchronous_commit,
       current_setting('synchronous_standby_names') AS standby_names;

-- name: durability_standbys
SELECT count(*) AS standbys FROM pg_stat_replication
 WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum');

-- name: ensure_environment
INSERT INTO rest_delivery_environment (environment_id) VALUES (%(environment_id)s)
ON CONFLICT (environment_id) DO NOTHING;

-- name: environment_gate
SELECT journal_epoch, mutation_gate, gate_reason, updated_by, updated_at
  FROM rest_delivery_environment WHERE environment_id = %(environment_id)s;

-- name: get_environment
SELECT environment_id, journal_epoch, mutation_gate
  FROM rest_delivery_environment WHERE environment_id = %(environment_id)s;

-- name: share_environment
SELECT environment_id, journal_epoch, mutation_gate
  FROM rest_delivery_environment WHERE environment_id = %(environment_id)s FOR SHARE;

-- name: lock_environment
SELECT environment_id, journal_epoch, mutation_gate
  FROM rest_delivery_environment WHERE environment_id = %(environment_id)s FOR UPDATE;

-- name: set_environment_gate
UPDATE rest_delivery_environment
   SET mutation_gate = %(gate)s, journal_epoch = %(epoch)s, gate_reason = %(reason)s,
       updated_by = %(actor)s, updated_at = clock_timestamp()
 WHERE environment_id = %(environment_id)s;

-- name: create_domain_lock
INSERT INTO rest_delivery_effect_domain_lock (effect_conflict_domain) VALUES (%(domain)s)
ON CONFLICT (effect_conflict_domain) DO NOTHING;

-- name: lock_domain
SELECT effect_conflict_domain FROM rest_delivery_effect_domain_lock
 WHERE effect_conflict_domain = %(domain)s FOR UPDATE;

-- name: get_parent
SELECT * FROM rest_delivery_parent
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s;

-- name: parent_namespace
SELECT operation_namespace FROM rest_delivery_parent
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s;

-- name: lock_parent
SELECT * FROM rest_delivery_parent
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s FOR UPDATE;

-- name: find_parent
SELECT * FROM rest_delivery_parent
 WHERE operation_namespace = %(operation_namespace)s AND tenant_id = %(tenant_id)s
   AND environment_id = %(environment_id)s AND parent_plan_digest = %(parent_plan_digest)s;

-- name: insert_parent
INSERT INTO rest_delivery_parent (
    parent_id, operation_namespace, tenant_id, environment_id, logical_route_id, plan_digest,
    parent_plan_digest, frozen_parent_digest, profile_contract_digest, effect_conflict_domain,
    mutation_kind, generation_end, correction_revision, boundary, max_remote_jobs, child_count,
    replay_fence_certified, max_submit_attempts, replay_retention_s)
VALUES (
    %(parent_id)s, %(operation_namespace)s, %(tenant_id)s, %(environment_id)s,
    %(logical_route_id)s, %(plan_digest)s, %(parent_plan_digest)s, %(frozen_parent_digest)s,
    %(profile_contract_digest)s, %(effect_conflict_domain)s, %(mutation_kind)s,
    %(generation_end)s, %(correction_revision)s, daterange(%(boundary_from)s, %(boundary_to)s, '[)'),
    %(max_remote_jobs)s, %(child_count)s, %(replay_fence_certified)s, %(max_submit_attempts)s,
    %(replay_retention_s)s);

-- name: advance_frontier
UPDATE rest_delivery_parent SET checkpoint_frontier = %(frontier)s
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s
   AND checkpoint_frontier <= %(frontier)s
RETURNING checkpoint_frontier;

-- name: children_of_parent
SELECT * FROM rest_delivery_child
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s ORDER BY ordinal;

-- name: list_deliveries
-- The newest parents of the environment (of one operation namespace when one is given;
-- bounded by limit), each with its children grouped by
-- state: one row per (parent, state, last error code, without rows).
WITH recent AS (
    SELECT * FROM rest_delivery_parent
     WHERE environment_id = %(environment_id)s
       AND (%(operation_namespace)s::text IS NULL OR operation_namespace = %(operation_namespace)s::text)
     ORDER BY admitted_at DESC, parent_id DESC
     LIMIT %(limit)s)
SELECT p.parent_id, p.logical_route_id, p.mutation_kind, p.boundary, p.admitted_at,
       p.child_count, p.checkpoint_frontier,
       c.state_name, c.execution_state, c.remote_effect, c.acknowledgement_state,
       c.verification_state, c.checkpoint_state, c.last_error_code,
       (c.row_count = 0 AND c.attempt_ordinal = 0) AS without_rows,
       count(*) AS children, min(c.ordinal) AS first_ordinal
  FROM recent p
  JOIN rest_delivery_child c
    ON c.parent_id = p.parent_id AND c.environment_id = p.environment_id
 GROUP BY p.parent_id, p.logical_route_id, p.mutation_kind, p.boundary, p.admitted_at,
          p.child_count, p.checkpoint_frontier, c.state_name, c.execution_state,
          c.remote_effect, c.acknowledgement_state, c.verification_state, c.checkpoint_state,
          c.last_error_code, without_rows
 ORDER BY p.admitted_at DESC, p.parent_id DESC, first_ordinal;

-- name: children_after_frontier
SELECT * FROM rest_delivery_child
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s
   AND ordinal > %(frontier)s ORDER BY ordinal LIMIT %(batch)s;

-- name: get_child
SELECT * FROM rest_delivery_child
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s;

-- name: children_by_key
SELECT * FROM rest_delivery_child
 WHERE operation_namespace = %(operation_namespace)s AND delivery_key = ANY(%(keys)s);

-- name: overlapping_children
-- ``reconciled``: the child's current tuple was recorded by an operator reconciliation.
SELECT c.operation_id, c.parent_id, c.delivery_key, c.mutation_intent_digest, c.mutation_kind,
       c.generation_end, c.correction_revision, lower(c.scope) AS scope_from,
       upper(c.scope) AS scope_to, c.execution_state, c.remote_effect,
       EXISTS (SELECT 1 FROM rest_delivery_audit a
                WHERE a.operation_id = c.operation_id AND a.revision = c.revision
                  AND a.transition_id LIKE 'reconcile\_%%') AS reconciled
  FROM rest_delivery_child c
 WHERE c.effect_conflict_domain = %(domain)s
   AND c.scope && daterange(%(lo)s, %(hi)s, '[)');

-- name: overlapping_watermarks
SELECT lower(scope) AS scope_from, upper(scope) AS scope_to, generation_end, correction_revision
  FROM rest_delivery_watermark
 WHERE effect_conflict_domain = %(domain)s AND scope && daterange(%(lo)s, %(hi)s, '[)');

-- name: remove_touching_watermarks
DELETE FROM rest_delivery_watermark
 WHERE effect_conflict_domain = %(domain)s
   AND (scope && daterange(%(lo)s, %(hi)s, '[)') OR scope -|- daterange(%(lo)s, %(hi)s, '[)'))
RETURNING lower(scope) AS scope_from, upper(scope) AS scope_to, generation_end,
          correction_revision, operation_id;

-- name: insert_watermark
INSERT INTO rest_delivery_watermark (
    effect_conflict_domain, scope, generation_end, correction_revision, operation_id)
VALUES (%(domain)s, daterange(%(lo)s, %(hi)s, '[)'), %(generation_end)s,
        %(correction_revision)s, %(operation_id)s);

-- name: insert_children
-- A batch (UnitOfWork.run_many): every child of one admission in one statement, its parameter
-- rows as one jsonb array (ISO dates and timestamps), typed by the column definition list.
INSERT INTO rest_delivery_child (
    operation_id, parent_id, ordinal, operation_namespace, tenant_id, environment_id,
    delivery_key, receiver_mutation_key, mutation_intent_digest, effect_conflict_domain,
    mutation_kind, generation_end, correction_revision, scope, first_row, row_count, payload_key,
    payload_digest, payload_document_key, wire_bytes, state_name, execution_state, remote_effect,
    acknowledgement_state, verification_state, checkpoint_state, journal_epoch, revision,
    attempt_ordinal, observation_ordinal)
SELECT r.operation_id, r.parent_id, r.ordinal, r.operation_namespace, r.tenant_id,
       %(environment_id)s, r.delivery_key, r.receiver_mutation_key, r.mutation_intent_digest,
       r.effect_conflict_domain, r.mutation_kind, r.generation_end, r.correction_revision,
       daterange(r.scope_from, r.scope_to, '[)'), r.first_row, r.row_count, r.payload_key,
       r.payload_digest, r.payload_document_key, r.wire_bytes, r.state_name, r.execution_state,
       r.remote_effect, r.acknowledgement_state, r.verification_state, r.checkpoint_state,
       r.journal_epoch, r.revision, r.attempt_ordinal, r.observation_ordinal
  FROM jsonb_to_recordset(%(rows)s) AS r(
       operation_id text, parent_id text, ordinal integer, operation_namespace text,
       tenant_id text, delivery_key text, receiver_mutation_key text,
       mutation_intent_digest text, effect_conflict_domain text, mutation_kind text,
       generation_end timestamptz, correction_revision integer, scope_from date, scope_to date,
       first_row bigint, row_count bigint, payload_key text, payload_digest text,
       payload_document_key text, wire_bytes bigint, state_name text, execution_state text,
       remote_effect text, acknowledgement_state text, verification_state text,
       checkpoint_state text, journal_epoch bigint, revision bigint, attempt_ordinal integer,
       observation_ordinal integer)
 ORDER BY r.ordinal;

-- name: cas_child_audited
-- The revision CAS of a child and the audit row of the transition it commits, in one statement:
-- the audit row takes the new revision, namespace and tenant from the updated row (no row when
-- the CAS matched none). SQLite runs cas_child and insert_audit for the same.
WITH moved AS (
  UPDATE rest_delivery_child
     SET state_name = %(state_name)s, execution_state = %(execution_state)s,
         remote_effect = %(remote_effect)s, acknowledgement_state = %(acknowledgement_state)s,
         verification_state = %(verification_state)s, checkpoint_state = %(checkpoint_state)s,
         revision = revision + 1, journal_epoch = GREATEST(journal_epoch, %(journal_epoch)s),
         attempt_ordinal = attempt_ordinal + %(attempt_step)s,
         observation_ordinal = observation_ordinal + %(observation_step)s,
         receipt = COALESCE(%(receipt)s, receipt), next_check_after = %(next_check_after)s,
         last_error_code = %(error_code)s, updated_at = clock_timestamp()
   WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
     AND revision = %(expected_revision)s
  RETURNING *
), audited AS (
  INSERT INTO rest_delivery_audit (
      environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
      from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
  SELECT environment_id, operation_namespace, tenant_id, %(actor)s, operation_id,
         %(transition_id)s, %(from_state)s, %(to_state)s, revision, %(reconciliation_id)s,
         %(evidence_digest)s, %(digests)s
    FROM moved
)
SELECT * FROM moved;

-- name: insert_attempt
INSERT INTO rest_delivery_attempt (
    attempt_id, operation_id, environment_id, attempt_ordinal, marker_key, marker_digest,
    expected_revision, journal_epoch, lease_holder, lease_token)
VALUES (%(attempt_id)s, %(operation_id)s, %(environment_id)s, %(attempt_ordinal)s,
        %(marker_key)s, %(marker_digest)s, %(expected_revision)s, %(journal_epoch)s,
        %(lease_holder)s, %(lease_token)s);

-- name: latest_attempt
SELECT * FROM rest_delivery_attempt
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
 ORDER BY attempt_ordinal DESC LIMIT 1;

-- name: first_attempt
-- The child's earliest attempt: when its delivery key was first sent.
SELECT * FROM rest_delivery_attempt
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
 ORDER BY attempt_ordinal LIMIT 1;

-- name: record_attempt_outcome
UPDATE rest_delivery_attempt SET outcome = %(outcome)s, outcome_at = clock_timestamp()
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
   AND attempt_ordinal = %(attempt_ordinal)s AND outcome IS NULL;

-- name: list_attempts
SELECT attempt_id, operation_id, attempt_ordinal, marker_key, marker_digest, expected_revision,
       journal_epoch, lease_holder, lease_token, started_at, outcome, outcome_at
  FROM rest_delivery_attempt
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
 ORDER BY attempt_ordinal;

-- name: insert_observation
INSERT INTO rest_delivery_observation (
    operation_id, environment_id, observation_ordinal, revision, transition_id, document)
VALUES (%(operation_id)s, %(environment_id)s, %(observation_ordinal)s, %(revision)s,
        %(transition_id)s, %(document)s);

-- name: prune_observations
DELETE FROM rest_delivery_observation
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
   AND observation_id NOT IN (
       SELECT observation_id FROM rest_delivery_observation
        WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
        ORDER BY observation_id DESC LIMIT %(keep)s);

-- name: list_observations
SELECT observation_ordinal, revision, transition_id, document, observed_at
  FROM rest_delivery_observation
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
 ORDER BY observation_id;

-- name: operation_exists
SELECT 1 AS found FROM rest_delivery_child
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
UNION ALL
SELECT 1 FROM rest_delivery_parent
 WHERE parent_id = %(operation_id)s AND environment_id = %(environment_id)s;

-- name: acquire_lease
INSERT INTO rest_delivery_lease AS l (
    operation_id, kind, environment_id, holder, token, journal_epoch, expires_at)
VALUES (%(operation_id)s, %(kind)s, %(environment_id)s, %(holder)s, 1, %(journal_epoch)s,
        clock_timestamp() + make_interval(secs => %(ttl_seconds)s))
ON CONFLICT (operation_id, kind) DO UPDATE
   SET holder = EXCLUDED.holder, token = l.token + 1, journal_epoch = EXCLUDED.journal_epoch,
       expires_at = EXCLUDED.expires_at
 WHERE (l.expires_at <= clock_timestamp() OR l.journal_epoch < EXCLUDED.journal_epoch)
   AND l.environment_id = EXCLUDED.environment_id
RETURNING operation_id, kind, holder, token, expires_at;

-- name: check_lease
SELECT holder, token, journal_epoch, expires_at, expires_at > clock_timestamp() AS live
  FROM rest_delivery_lease
 WHERE operation_id = %(operation_id)s AND kind = %(kind)s
   AND environment_id = %(environment_id)s
   FOR SHARE;

-- name: opening_read
-- What a transaction under a held lease reads first, in one statement: the environment row
-- (get_environment), the lease as check_lease reads it (held FOR SHARE), the child (get_child)
-- and its latest attempt (latest_attempt). The environment's, lease's and attempt's columns are
-- prefixed o_env_, o_lease_, o_attempt_ (NULL when there is none); the child's are its own.
SELECT e.journal_epoch AS o_env_journal_epoch, e.mutation_gate AS o_env_mutation_gate,
       l.holder AS o_lease_holder, l.token AS o_lease_token,
       l.journal_epoch AS o_lease_journal_epoch, l.live AS o_lease_live,
       a.attempt_id AS o_attempt_attempt_id, a.attempt_ordinal AS o_attempt_attempt_ordinal,
       a.lease_holder AS o_attempt_lease_holder, a.lease_token AS o_attempt_lease_token,
       a.outcome AS o_attempt_outcome, c.*
  FROM rest_delivery_environment e
  LEFT JOIN LATERAL (
      SELECT holder, token, journal_epoch, expires_at > clock_timestamp() AS live
        FROM rest_delivery_lease
       WHERE operation_id = %(operation_id)s AND kind = %(kind)s
         AND environment_id = e.environment_id
         FOR SHARE) l ON true
  LEFT JOIN rest_delivery_child c
    ON c.operation_id = %(operation_id)s AND c.environment_id = e.environment_id
  LEFT JOIN LATERAL (
      SELECT attempt_id, attempt_ordinal, lease_holder, lease_token, outcome
        FROM rest_delivery_attempt
       WHERE operation_id = %(operation_id)s AND environment_id = e.environment_id
       ORDER BY attempt_ordinal DESC LIMIT 1) a ON true
 WHERE e.environment_id = %(environment_id)s;

-- name: admitted_mutation_lease
SELECT c.operation_id, l.holder, l.expires_at
  FROM rest_delivery_parent p
  JOIN rest_delivery_child c ON c.parent_id = p.parent_id
  JOIN rest_delivery_lease l
    ON l.operation_id = c.operation_id AND l.environment_id = p.environment_id
 WHERE p.operation_namespace = %(operation_namespace)s AND p.tenant_id = %(tenant_id)s
   AND p.environment_id = %(environment_id)s AND p.plan_digest = %(plan_digest)s
   AND p.boundary = daterange(%(boundary_from)s, %(boundary_to)s, '[)')
   AND l.kind = 'mutation' AND l.expires_at > clock_timestamp()
 ORDER BY l.expires_at DESC, c.ordinal
 LIMIT 1;

-- name: renew_lease
-- A heartbeat: extend a lease its holder still holds (same token, not yet expired) by the
-- database clock; no row when it expired or was taken over.
UPDATE rest_delivery_lease
   SET expires_at = clock_timestamp() + make_interval(secs => %(ttl_seconds)s)
 WHERE operation_id = %(operation_id)s AND kind = %(kind)s
   AND environment_id = %(environment_id)s AND holder = %(holder)s AND token = %(token)s
   AND expires_at > clock_timestamp()
RETURNING operation_id, kind, holder, token, expires_at;

-- name: release_lease
UPDATE rest_delivery_lease SET expires_at = LEAST(expires_at, clock_timestamp())
 WHERE operation_id = %(operation_id)s AND kind = %(kind)s
   AND environment_id = %(environment_id)s AND holder = %(holder)s AND token = %(token)s;

-- name: release_two_leases
-- release_lease for two leases of one operation (an answer's mutation lease and the
-- verification claim settled with it), in one statement.
UPDATE rest_delivery_lease SET expires_at = LEAST(expires_at, clock_timestamp())
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
   AND ((kind = %(kind)s AND holder = %(holder)s AND token = %(token)s)
        OR (kind = %(other_kind)s AND holder = %(other_holder)s AND token = %(other_token)s));

-- name: active_slots
SELECT slot, operation_id FROM rest_delivery_capacity_reservation
 WHERE effect_conflict_domain = %(domain)s AND released_at IS NULL ORDER BY slot;

-- name: reserve_slot
INSERT INTO rest_delivery_capacity_reservation (
    attempt_id, operation_id, environment_id, effect_conflict_domain, slot)
VALUES (%(attempt_id)s, %(operation_id)s, %(environment_id)s, %(domain)s, %(slot)s);

-- name: release_operation_capacity
UPDATE rest_delivery_capacity_reservation
   SET released_at = clock_timestamp(), release_reason = %(reason)s
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
   AND released_at IS NULL;

-- name: get_reservation
SELECT r.attempt_id, r.operation_id, r.effect_conflict_domain, r.slot, r.released_at,
       c.execution_state, c.remote_effect, c.attempt_ordinal AS current_attempt,
       a.attempt_ordinal
  FROM rest_delivery_capacity_reservation r
  LEFT JOIN rest_delivery_child c ON c.operation_id = r.operation_id
  LEFT JOIN rest_delivery_attempt a ON a.attempt_id = r.attempt_id
 WHERE r.attempt_id = %(attempt_id)s AND r.environment_id = %(environment_id)s;

-- name: release_reservation
UPDATE rest_delivery_capacity_reservation
   SET released_at = clock_timestamp(), release_reason = %(reason)s
 WHERE attempt_id = %(attempt_id)s AND environment_id = %(environment_id)s
   AND released_at IS NULL;

-- name: insert_audit
INSERT INTO rest_delivery_audit (
    environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
    from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
VALUES (%(environment_id)s, %(operation_namespace)s, %(tenant_id)s, %(actor)s,
        %(operation_id)s, %(transition_id)s, %(from_state)s, %(to_state)s, %(revision)s,
        %(reconciliation_id)s, %(evidence_digest)s, %(digests)s);

-- name: insert_audits
-- A batch (UnitOfWork.run_many) of insert_audit rows in one statement, as one jsonb array;
-- audit ids follow the array order.
INSERT INTO rest_delivery_audit (
    environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
    from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
SELECT %(environment_id)s, r.operation_namespace, r.tenant_id, r.actor, r.operation_id,
       r.transition_id, r.from_state, r.to_state, r.revision, r.reconciliation_id,
       r.evidence_digest, r.digests
  FROM jsonb_populate_recordset(NULL::rest_delivery_audit, %(rows)s) WITH ORDINALITY AS r
 ORDER BY r.ordinality;

-- name: prior_reconciliation
SELECT reconciliation_id, evidence_digest FROM rest_delivery_audit
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
   AND (reconciliation_id IS NOT NULL OR evidence_digest IS NOT NULL);

-- name: audit_transitions_at_revision
-- The transitions recorded at one revision of an operation (what produced its current tuple).
SELECT transition_id FROM rest_delivery_audit
 WHERE operation_id = %(operation_id)s AND environment_id = %(environment_id)s
   AND revision = %(revision)s;

-- name: list_audit
-- The environment's audit records, oldest first: of one operation and, for a delivery, its
-- children (%(operation_id)s NULL: every operation), recorded at or after %(since)s (NULL:
-- always).
SELECT audit_id, at, actor, operation_id, operation_namespace, tenant_id, transition_id,
       from_state, to_state, revision, reconciliation_id, evidence_digest, digests
  FROM rest_delivery_audit
 WHERE environment_id = %(environment_id)s
   AND (%(operation_id)s::text IS NULL OR operation_id = %(operation_id)s::text
        OR left(operation_id, length(%(operation_id)s::text) + 1) = %(operation_id)s::text || '_')
   AND (%(since)s::timestamptz IS NULL OR at >= %(since)s::timestamptz)
 ORDER BY audit_id
 LIMIT %(limit)s;

-- name: list_operator_actions
-- The audited operator actions (transition ids operator_<command>) of some operations, oldest
-- first.
SELECT audit_id, operation_id, transition_id, actor, from_state, to_state, revision,
       reconciliation_id, evidence_digest, digests, at
  FROM rest_delivery_audit
 WHERE environment_id = %(environment_id)s AND operation_id = ANY(%(operation_ids)s)
   AND substr(transition_id, 1, 9) = 'operator_'
 ORDER BY audit_id;

-- name: insert_operator_audit
-- insert_audit of one operator action, returning its audit id and journal time.
INSERT INTO rest_delivery_audit (
    environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
    from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
VALUES (%(environment_id)s, %(operation_namespace)s, %(tenant_id)s, %(actor)s,
        %(operation_id)s, %(transition_id)s, %(from_state)s, %(to_state)s, %(revision)s,
        %(reconciliation_id)s, %(evidence_digest)s, %(digests)s)
RETURNING audit_id, at;

-- name: revocations
-- The deny-only revocation list of the environment, profiles first.
SELECT kind, ref, reason, revoked_by, revoked_at FROM rest_delivery_revocation
 WHERE environment_id = %(environment_id)s ORDER BY kind DESC, ref;

-- name: revocation_history
-- The newest audited revoke/unrevoke changes of the environment, newest first.
SELECT actor, transition_id, digests, at FROM rest_delivery_audit
 WHERE environment_id = %(environment_id)s
   AND transition_id IN ('revocation_revoke', 'revocation_unrevoke')
 ORDER BY audit_id DESC LIMIT %(limit)s;

-- name: insert_revocation
INSERT INTO rest_delivery_revocation (environment_id, kind, ref, reason, revoked_by)
VALUES (%(environment_id)s, %(kind)s, %(ref)s, %(reason)s, %(actor)s)
ON CONFLICT (environment_id, kind, ref) DO NOTHING;

-- name: delete_revocation
DELETE FROM rest_delivery_revocation
 WHERE environment_id = %(environment_id)s AND kind = %(kind)s AND ref = %(ref)s;

-- name: record_parent_authority
-- What a new submit of the parent's children is checked against (set once, at admission).
UPDATE rest_delivery_parent
   SET profile_ref = %(profile_ref)s, binding_ref = %(binding_ref)s,
       identity_valid_until = %(identity_valid_until)s
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s;

-- name: submit_authority
-- A parent's row (with its recorded profile, binding and identity expiry), the revocations
-- naming them, and the database clock the expiry is judged by (no second round trip for it).
SELECT p.*, clock_timestamp() AS journal_now,
       r.kind AS revoked_kind, r.ref AS revoked_ref, r.reason AS revoked_reason,
       r.revoked_by, r.revoked_at
  FROM rest_delivery_parent p
  LEFT JOIN rest_delivery_revocation r
    ON r.environment_id = p.environment_id
   AND ((r.kind = 'profile' AND r.ref = p.profile_ref)
        OR (r.kind = 'binding' AND r.ref = p.binding_ref))
 WHERE p.parent_id = %(parent_id)s AND p.environment_id = %(environment_id)s
 ORDER BY r.kind DESC;
-- name: expire_observations
DELETE FROM rest_delivery_observation o
 USING rest_delivery_child c, rest_delivery_parent p
 WHERE o.environment_id = %(environment_id)s
   AND c.operation_id = o.operation_id AND c.environment_id = o.environment_id
   AND c.execution_state = 'FINALIZED'
   AND p.parent_id = c.parent_id
   AND p.profile_contract_digest = %(profile_contract_digest)s
   AND o.observed_at < clock_timestamp() - make_interval(days => %(days)s);
-- Distributed rate limits (0003_rate_limits): keyed by receiver authority and principal, not
-- by environment. Every turn of a scope is taken under its bucket row's lock.

-- name: lock_rate_bucket
-- Creates the bucket (its first turn due now) or locks it; the clock is read after the lock.
INSERT INTO rest_delivery_rate_bucket AS b (authority, principal, kind, next_turn_at)
VALUES (%(authority)s, %(principal)s, %(kind)s, clock_timestamp())
ON CONFLICT (authority, principal, kind) DO UPDATE SET kind = b.kind
RETURNING next_turn_at, clock_timestamp() AS now;

-- name: advance_rate_bucket
UPDATE rest_delivery_rate_bucket SET next_turn_at = %(next_turn_at)s
 WHERE authority = %(authority)s AND principal = %(principal)s AND kind = %(kind)s;

-- name: live_active_slots
-- The slots of a scope held now: not released, within their bound, under a live mutation lease
-- (releasing that lease releases its slot).
SELECT r.slot, r.operation_id FROM rest_delivery_active_request r
  JOIN rest_delivery_lease l
    ON l.operation_id = r.operation_id AND l.kind = 'mutation' AND l.token = r.lease_token
 WHERE r.authority = %(authority)s AND r.principal = %(principal)s
   AND r.expires_at > clock_timestamp() AND l.expires_at > clock_timestamp()
 ORDER BY r.slot;

-- name: claim_active_slot
-- A slot live_active_slots did not list (the caller holds the scope's submit bucket lock
-- since, so no other claim of the scope interleaves).
INSERT INTO rest_delivery_active_request AS r (
    authority, principal, slot, holder, operation_id, lease_token, token, expires_at)
VALUES (%(authority)s, %(principal)s, %(slot)s, %(holder)s, %(operation_id)s, %(lease_token)s,
        1, %(expires_at)s)
ON CONFLICT (authority, principal, slot) DO UPDATE
   SET holder = EXCLUDED.holder, operation_id = EXCLUDED.operation_id,
       lease_token = EXCLUDED.lease_token, token = r.token + 1, expires_at = EXCLUDED.expires_at
RETURNING slot, token;

-- name: release_active_slot
UPDATE rest_delivery_active_request SET expires_at = LEAST(expires_at, clock_timestamp())
 WHERE authority = %(authority)s AND principal = %(principal)s AND slot = %(slot)s
   AND holder = %(holder)s AND token = %(token)s;

-- name: record_payload_retention
-- The profile's retention.payload_days of a new parent (set once, at admission).
UPDATE rest_delivery_parent SET payload_days = %(payload_days)s
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s;

-- name: retention_children
-- Every child of the environment, and every child elsewhere in this database whose payload or
-- payload document key one of them also uses, with its parent's retention facts: whether the
-- parent was admitted more than payload_days ago by the database clock, and whether its
-- payloads already expired.
WITH used AS (
    SELECT payload_key AS artifact_key FROM rest_delivery_child
     WHERE environment_id = %(environment_id)s
    UNION
    SELECT payload_document_key FROM rest_delivery_child
     WHERE environment_id = %(environment_id)s)
SELECT c.parent_id, c.operation_id, c.ordinal, c.environment_id, c.payload_key,
       c.payload_document_key, c.execution_state, c.remote_effect, c.acknowledgement_state,
       c.verification_state, c.checkpoint_state,
       p.payload_days, p.admitted_at, p.payloads_expired_at,
       (p.payload_days IS NOT NULL
        AND p.admitted_at < clock_timestamp() - make_interval(days => p.payload_days)) AS aged
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE c.environment_id = %(environment_id)s
    OR c.payload_key IN (SELECT artifact_key FROM used)
    OR c.payload_document_key IN (SELECT artifact_key FROM used)
 ORDER BY p.admitted_at, c.parent_id, c.ordinal;

-- name: expire_parent_payloads
-- Mark one parent's payloads expired (once); its row is returned only when this call did it.
UPDATE rest_delivery_parent SET payloads_expired_at = clock_timestamp()
 WHERE parent_id = %(parent_id)s AND environment_id = %(environment_id)s
   AND payloads_expired_at IS NULL
RETURNING payloads_expired_at;

-- name: journal_id
SELECT journal_id FROM rest_delivery_journal WHERE singleton;

-- name: record_namespace
INSERT INTO rest_delivery_namespace
    (operation_namespace, platform_instance_id, tenant_id, environment_id, namespace_revision)
VALUES (%(operation_namespace)s, %(platform_instance_id)s, %(tenant_id)s, %(environment_id)s,
        %(namespace_revision)s)
ON CONFLICT (operation_namespace) DO NOTHING;

-- name: journal_namespaces
SELECT operation_namespace, platform_instance_id, tenant_id, environment_id, namespace_revision
  FROM rest_delivery_namespace ORDER BY operation_namespace;

-- name: live_leases_of_parent
-- The unexpired leases on a delivery and its children (ids ``<parent>_NNNN``), soonest first.
SELECT operation_id, kind, holder, token, expires_at
  FROM rest_delivery_lease
 WHERE environment_id = %(environment_id)s
   AND (operation_id = %(parent_id)s OR operation_id LIKE %(children)s ESCAPE '\')
   AND expires_at > clock_timestamp()
 ORDER BY expires_at, operation_id, kind;

-- Metrics (dpone.journal._metrics): one read-only transaction of grouped reads for
-- `dpone metrics serve`; no operation id, digest or namespace leaves these groups.

-- name: metrics_read_only
-- The first statement of the metrics transaction: one snapshot for every read after it.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;

-- name: metrics_children
-- The environment's children grouped by state and by what their delivery records: profile ref,
-- binding ref, whether its remote identity attestation has expired (database clock), effect
-- domain and remote-job slots; how many, and the oldest last update among them.
SELECT p.profile_ref, p.binding_ref,
       (p.identity_valid_until IS NOT NULL
        AND p.identity_valid_until <= clock_timestamp()) AS identity_expired,
       p.effect_conflict_domain, p.max_remote_jobs,
       c.execution_state, c.remote_effect, c.acknowledgement_state, c.verification_state,
       c.checkpoint_state, count(*) AS children, min(c.updated_at) AS oldest_update
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE c.environment_id = %(environment_id)s
 GROUP BY p.profile_ref, p.binding_ref, identity_expired, p.effect_conflict_domain,
          p.max_remote_jobs, c.execution_state, c.remote_effect, c.acknowledgement_state,
          c.verification_state, c.checkpoint_state;

-- name: metrics_unknown_effects
-- Children whose remote effect is UNKNOWN, by profile ref: how many, and since when the oldest
-- is uncertain (its current attempt's start; its last update when it has no attempt row).
SELECT p.profile_ref, count(*) AS children,
       min(COALESCE(a.started_at, c.updated_at)) AS oldest_since
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
  LEFT JOIN rest_delivery_attempt a
    ON a.operation_id = c.operation_id AND a.attempt_ordinal = c.attempt_ordinal
 WHERE c.environment_id = %(environment_id)s AND c.remote_effect = 'UNKNOWN'
 GROUP BY p.profile_ref;

-- name: metrics_receipts
-- Receipts still observed (a receipt id on a child in an %(observing)s execution state), by
-- profile ref: how many, and when the oldest was recorded (its attempt's outcome time).
SELECT p.profile_ref, count(*) AS children,
       min(COALESCE(a.outcome_at, c.updated_at)) AS oldest_since
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
  LEFT JOIN rest_delivery_attempt a
    ON a.operation_id = c.operation_id AND a.attempt_ordinal = c.attempt_ordinal
 WHERE c.environment_id = %(environment_id)s AND c.execution_state = ANY(%(observing)s)
   AND c.receipt ->> 'id' IS NOT NULL
 GROUP BY p.profile_ref;

-- name: metrics_capacity
-- Remote-job slots held now in the effect domains this environment's deliveries use, by any
-- environment (a domain's slots are shared); the profile ref only of this environment's holders.
SELECT r.effect_conflict_domain, (r.environment_id = %(environment_id)s) AS here,
       CASE WHEN r.environment_id = %(environment_id)s THEN p.profile_ref END AS profile_ref,
       count(*) AS held
  FROM rest_delivery_capacity_reservation r
  LEFT JOIN rest_delivery_child c ON c.operation_id = r.operation_id
  LEFT JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE r.released_at IS NULL
   AND r.effect_conflict_domain IN (SELECT effect_conflict_domain FROM rest_delivery_parent
                                     WHERE environment_id = %(environment_id)s)
 GROUP BY 1, 2, 3;

-- name: metrics_parents
-- The environment's deliveries by profile ref: the newest boundary end and admission.
SELECT profile_ref, count(*) AS parents, max(upper(boundary)) AS newest_boundary_end,
       max(admitted_at) AS newest_admitted_at
  FROM rest_delivery_parent
 WHERE environment_id = %(environment_id)s
 GROUP BY profile_ref;

-- name: metrics_recovery_actions
-- Audited operator recovery actions of the environment, by transition id.
SELECT transition_id, count(*) AS actions
  FROM rest_delivery_audit
 WHERE environment_id = %(environment_id)s
   AND (substr(transition_id, 1, 9) = 'operator_' OR transition_id = 'capacity_repair')
 GROUP BY transition_id;

-- name: metrics_retention_children
-- retention_children's rows (and the profile ref) of this environment's deliveries old enough to
-- be pruned (the same aged test) and not pruned yet: whether each is eligible is
-- dpone.journal._retention's decision.
SELECT c.parent_id, c.operation_id, c.ordinal, c.environment_id, c.payload_key,
       c.payload_document_key, c.execution_state, c.remote_effect, c.acknowledgement_state,
       c.verification_state, c.checkpoint_state,
       p.payload_days, p.admitted_at, p.payloads_expired_at, p.profile_ref, true AS aged
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE p.environment_id = %(environment_id)s AND p.payloads_expired_at IS NULL
   AND p.payload_days IS NOT NULL
   AND p.admitted_at < clock_timestamp() - make_interval(days => p.payload_days)
 ORDER BY p.admitted_at, c.parent_id, c.ordinal;
