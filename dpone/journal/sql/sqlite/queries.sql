-- Named queries of the SQLite delivery journal, loaded by name (dpone.journal._sql).
-- Every operation query is scoped by environment_id; effect-domain fence queries are scoped by
-- the physical effect-conflict domain on purpose (namespaces cannot hide one physical effect).
-- Half-open scopes overlap when a.from < b.to AND b.from < a.to (ISO date text compares as
-- dates). Every timestamp is the database clock; lease liveness compares with julianday().

-- name: migration_table
CREATE TABLE IF NOT EXISTS dpone_schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    checksum    TEXT NOT NULL,
    applied_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- name: migration_applied
SELECT version, name, checksum FROM dpone_schema_migrations ORDER BY version;

-- name: migration_record
INSERT INTO dpone_schema_migrations (version, name, checksum)
VALUES (:version, :name, :checksum);

-- name: clock_now
SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now;

-- name: ensure_environment
INSERT INTO rest_delivery_environment (environment_id) VALUES (:environment_id)
ON CONFLICT (environment_id) DO NOTHING;

-- name: environment_gate
SELECT journal_epoch, mutation_gate, gate_reason, updated_by, updated_at
  FROM rest_delivery_environment WHERE environment_id = :environment_id;

-- name: get_environment
SELECT environment_id, journal_epoch, mutation_gate
  FROM rest_delivery_environment WHERE environment_id = :environment_id;

-- name: share_environment
-- Locking reads are plain reads here: the BEGIN IMMEDIATE write lock already holds every row.
SELECT environment_id, journal_epoch, mutation_gate
  FROM rest_delivery_environment WHERE environment_id = :environment_id;

-- name: lock_environment
SELECT environment_id, journal_epoch, mutation_gate
  FROM rest_delivery_environment WHERE environment_id = :environment_id;

-- name: set_environment_gate
UPDATE rest_delivery_environment
   SET mutation_gate = :gate, journal_epoch = :epoch, gate_reason = :reason,
       updated_by = :actor, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE environment_id = :environment_id;

-- name: get_parent
SELECT * FROM rest_delivery_parent
 WHERE parent_id = :parent_id AND environment_id = :environment_id;

-- name: parent_namespace
SELECT operation_namespace FROM rest_delivery_parent
 WHERE parent_id = :parent_id AND environment_id = :environment_id;

-- name: lock_parent
SELECT * FROM rest_delivery_parent
 WHERE parent_id = :parent_id AND environment_id = :environment_id;

-- name: find_parent
SELECT * FROM rest_delivery_parent
 WHERE operation_namespace = :operation_namespace AND tenant_id = :tenant_id
   AND environment_id = :environment_id AND parent_plan_digest = :parent_plan_digest;

-- name: insert_parent
INSERT INTO rest_delivery_parent (
    parent_id, operation_namespace, tenant_id, environment_id, logical_route_id, plan_digest,
    parent_plan_digest, frozen_parent_digest, profile_contract_digest, effect_conflict_domain,
    mutation_kind, generation_end, correction_revision, boundary_from, boundary_to,
    max_remote_jobs, child_count, replay_fence_certified, max_submit_attempts,
    replay_retention_s)
VALUES (
    :parent_id, :operation_namespace, :tenant_id, :environment_id, :logical_route_id,
    :plan_digest, :parent_plan_digest, :frozen_parent_digest, :profile_contract_digest,
    :effect_conflict_domain, :mutation_kind, :generation_end, :correction_revision,
    :boundary_from, :boundary_to, :max_remote_jobs, :child_count, :replay_fence_certified,
    :max_submit_attempts, :replay_retention_s);

-- name: advance_frontier
UPDATE rest_delivery_parent SET checkpoint_frontier = :frontier
 WHERE parent_id = :parent_id AND environment_id = :environment_id
   AND checkpoint_frontier <= :frontier;

-- name: children_of_parent
SELECT * FROM rest_delivery_child
 WHERE parent_id = :parent_id AND environment_id = :environment_id ORDER BY ordinal;

-- name: list_deliveries
-- The newest parents of the environment (of one operation namespace when one is given;
-- bounded by limit; rowid orders admissions within one
-- clock millisecond), each with its children grouped by state: one row per (parent, state,
-- last error code).
WITH recent AS (
    SELECT rowid AS admission_order, * FROM rest_delivery_parent
     WHERE environment_id = :environment_id
       AND (:operation_namespace IS NULL OR operation_namespace = :operation_namespace)
     ORDER BY admitted_at DESC, admission_order DESC
     LIMIT :limit)
SELECT p.parent_id, p.logical_route_id, p.mutation_kind, p.boundary_from, p.boundary_to,
       p.admitted_at, p.child_count, p.checkpoint_frontier,
       c.state_name, c.execution_state, c.remote_effect, c.acknowledgement_state,
       c.verification_state, c.checkpoint_state, c.last_error_code,
       (c.row_count = 0 AND c.attempt_ordinal = 0) AS without_rows,
       count(*) AS children, min(c.ordinal) AS first_ordinal
  FROM recent p
  JOIN rest_delivery_child c
    ON c.parent_id = p.parent_id AND c.environment_id = p.environment_id
 GROUP BY p.admission_order, p.parent_id, c.state_name, c.execution_state, c.remote_effect,
          c.acknowledgement_state, c.verification_state, c.checkpoint_state, c.last_error_code, without_rows
 ORDER BY p.admitted_at DESC, p.admission_order DESC, first_ordinal;

-- name: children_after_frontier
SELECT * FROM rest_delivery_child
 WHERE parent_id = :parent_id AND environment_id = :environment_id
   AND ordinal > :frontier ORDER BY ordinal LIMIT :batch;

-- name: get_child
SELECT * FROM rest_delivery_child
 WHERE operation_id = :operation_id AND environment_id = :environment_id;

-- name: children_by_key
SELECT * FROM rest_delivery_child
 WHERE operation_namespace = :operation_namespace
   AND delivery_key IN (SELECT value FROM json_each(:keys));

-- name: overlapping_children
-- ``reconciled``: the child's current tuple was recorded by an operator reconciliation.
SELECT c.operation_id, c.parent_id, c.delivery_key, c.mutation_intent_digest, c.mutation_kind,
       c.generation_end, c.correction_revision, c.scope_from, c.scope_to, c.execution_state,
       c.remote_effect,
       EXISTS (SELECT 1 FROM rest_delivery_audit a
                WHERE a.operation_id = c.operation_id AND a.revision = c.revision
                  AND a.transition_id LIKE 'reconcile\_%' ESCAPE '\') AS reconciled
  FROM rest_delivery_child c
 WHERE c.effect_conflict_domain = :domain AND c.scope_from < :hi AND :lo < c.scope_to;

-- name: overlapping_watermarks
SELECT scope_from, scope_to, generation_end, correction_revision
  FROM rest_delivery_watermark
 WHERE effect_conflict_domain = :domain AND scope_from < :hi AND :lo < scope_to;

-- name: remove_touching_watermarks
DELETE FROM rest_delivery_watermark
 WHERE effect_conflict_domain = :domain AND scope_from <= :hi AND :lo <= scope_to
RETURNING scope_from, scope_to, generation_end, correction_revision, operation_id;

-- name: insert_watermark
INSERT INTO rest_delivery_watermark (
    effect_conflict_domain, scope_from, scope_to, generation_end, correction_revision,
    operation_id)
VALUES (:domain, :lo, :hi, :generation_end, :correction_revision, :operation_id);

-- name: insert_children
-- A batch (UnitOfWork.run_many): run once per child row with executemany.
INSERT INTO rest_delivery_child (
    operation_id, parent_id, ordinal, operation_namespace, tenant_id, environment_id,
    delivery_key, receiver_mutation_key, mutation_intent_digest, effect_conflict_domain,
    mutation_kind, generation_end, correction_revision, scope_from, scope_to, first_row,
    row_count, payload_key, payload_digest, payload_document_key, wire_bytes, state_name,
    execution_state, remote_effect, acknowledgement_state, verification_state,
    checkpoint_state, journal_epoch, revision, attempt_ordinal, observation_ordinal)
VALUES (
    :operation_id, :parent_id, :ordinal, :operation_namespace, :tenant_id, :environment_id,
    :delivery_key, :receiver_mutation_key, :mutation_intent_digest, :effect_conflict_domain,
    :mutation_kind, :generation_end, :correction_revision, :scope_from, :scope_to, :first_row,
    :row_count, :payload_key, :payload_digest, :payload_document_key, :wire_bytes, :state_name,
    :execution_state, :remote_effect, :acknowledgement_state, :verification_state,
    :checkpoint_state, :journal_epoch, :revision, :attempt_ordinal, :observation_ordinal);

-- name: cas_child
UPDATE rest_delivery_child
   SET state_name = :state_name, execution_state = :execution_state,
       remote_effect = :remote_effect, acknowledgement_state = :acknowledgement_state,
       verification_state = :verification_state, checkpoint_state = :checkpoint_state,
       revision = revision + 1, journal_epoch = max(journal_epoch, :journal_epoch),
       attempt_ordinal = attempt_ordinal + :attempt_step,
       observation_ordinal = observation_ordinal + :observation_step,
       receipt = coalesce(:receipt, receipt), next_check_after = :next_check_after,
       last_error_code = :error_code, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE operation_id = :operation_id AND environment_id = :environment_id
   AND revision = :expected_revision
RETURNING *;

-- name: insert_attempt
INSERT INTO rest_delivery_attempt (
    attempt_id, operation_id, environment_id, attempt_ordinal, marker_key, marker_digest,
    expected_revision, journal_epoch, lease_holder, lease_token)
VALUES (:attempt_id, :operation_id, :environment_id, :attempt_ordinal, :marker_key,
        :marker_digest, :expected_revision, :journal_epoch, :lease_holder, :lease_token);

-- name: latest_attempt
SELECT * FROM rest_delivery_attempt
 WHERE operation_id = :operation_id AND environment_id = :environment_id
 ORDER BY attempt_ordinal DESC LIMIT 1;

-- name: first_attempt
-- The child's earliest attempt: when its delivery key was first sent.
SELECT * FROM rest_delivery_attempt
 WHERE operation_id = :operation_id AND environment_id = :environment_id
 ORDER BY attempt_ordinal LIMIT 1;

-- name: record_attempt_outcome
UPDATE rest_delivery_attempt
   SET outcome = :outcome, outcome_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE operation_id = :operation_id AND environment_id = :environment_id
   AND attempt_ordinal = :attempt_ordinal AND outcome IS NULL;

-- name: list_attempts
SELECT attempt_id, operation_id, attempt_ordinal, marker_key, marker_digest, expected_revision,
       journal_epoch, lease_holder, lease_token, started_at, outcome, outcome_at
  FROM rest_delivery_attempt
 WHERE operation_id = :operation_id AND environment_id = :environment_id
 ORDER BY attempt_ordinal;

-- name: insert_observation
INSERT INTO rest_delivery_observation (
    operation_id, environment_id, observation_ordinal, revision, transition_id, document)
VALUES (:operation_id, :environment_id, :observation_ordinal, :revision, :transition_id,
        :document);

-- name: prune_observations
DELETE FROM rest_delivery_observation
 WHERE operation_id = :operation_id AND observation_id NOT IN (
       SELECT observation_id FROM rest_delivery_observation
        WHERE operation_id = :operation_id ORDER BY observation_id DESC LIMIT :keep);

-- name: list_observations
SELECT observation_ordinal, revision, transition_id, document, observed_at
  FROM rest_delivery_observation
 WHERE operation_id = :operation_id AND environment_id = :environment_id
 ORDER BY observation_id;

-- name: operation_exists
SELECT 1 AS found FROM rest_delivery_child
 WHERE operation_id = :operation_id AND environment_id = :environment_id
UNION ALL
SELECT 1 FROM rest_delivery_parent
 WHERE parent_id = :operation_id AND environment_id = :environment_id;

-- name: acquire_lease
INSERT INTO rest_delivery_lease (
    operation_id, kind, environment_id, holder, token, journal_epoch, expires_at)
VALUES (:operation_id, :kind, :environment_id, :holder, 1, :journal_epoch,
        strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('%+d seconds', :ttl_seconds)))
ON CONFLICT (operation_id, kind) DO UPDATE
   SET holder = excluded.holder, token = rest_delivery_lease.token + 1,
       journal_epoch = excluded.journal_epoch, expires_at = excluded.expires_at
 WHERE (julianday(rest_delivery_lease.expires_at) <= julianday('now')
        OR rest_delivery_lease.journal_epoch < excluded.journal_epoch)
   AND rest_delivery_lease.environment_id = excluded.environment_id
RETURNING operation_id, kind, holder, token, expires_at;

-- name: check_lease
SELECT holder, token, journal_epoch, expires_at,
       julianday(expires_at) > julianday('now') AS live
  FROM rest_delivery_lease
 WHERE operation_id = :operation_id AND kind = :kind AND environment_id = :environment_id;

-- name: opening_read
-- What a transaction under a held lease reads first, in one statement: the environment row
-- (get_environment), the lease as check_lease reads it, the child (get_child) and its latest
-- attempt (latest_attempt). The environment's, lease's and attempt's columns are prefixed
-- o_env_, o_lease_, o_attempt_ (NULL when there is none); the child's are its own.
SELECT e.journal_epoch AS o_env_journal_epoch, e.mutation_gate AS o_env_mutation_gate,
       l.holder AS o_lease_holder, l.token AS o_lease_token,
       l.journal_epoch AS o_lease_journal_epoch, julianday(l.expires_at) > julianday('now') AS o_lease_live,
       a.attempt_id AS o_attempt_attempt_id, a.attempt_ordinal AS o_attempt_attempt_ordinal,
       a.lease_holder AS o_attempt_lease_holder, a.lease_token AS o_attempt_lease_token,
       a.outcome AS o_attempt_outcome, c.*
  FROM rest_delivery_environment e
  LEFT JOIN rest_delivery_lease l
    ON l.operation_id = :operation_id AND l.kind = :kind AND l.environment_id = e.environment_id
  LEFT JOIN rest_delivery_child c
    ON c.operation_id = :operation_id AND c.environment_id = e.environment_id
  LEFT JOIN rest_delivery_attempt a
    ON a.attempt_id = (SELECT attempt_id FROM rest_delivery_attempt
                        WHERE operation_id = :operation_id AND environment_id = e.environment_id
                        ORDER BY attempt_ordinal DESC LIMIT 1)
 WHERE e.environment_id = :environment_id;

-- name: admitted_mutation_lease
SELECT c.operation_id, l.holder, l.expires_at
  FROM rest_delivery_parent p
  JOIN rest_delivery_child c ON c.parent_id = p.parent_id
  JOIN rest_delivery_lease l
    ON l.operation_id = c.operation_id AND l.environment_id = p.environment_id
 WHERE p.operation_namespace = :operation_namespace AND p.tenant_id = :tenant_id
   AND p.environment_id = :environment_id AND p.plan_digest = :plan_digest
   AND p.boundary_from = :boundary_from AND p.boundary_to = :boundary_to
   AND l.kind = 'mutation' AND julianday(l.expires_at) > julianday('now')
 ORDER BY julianday(l.expires_at) DESC, c.ordinal
 LIMIT 1;

-- name: renew_lease
-- A heartbeat: extend a lease its holder still holds (same token, not yet expired) by the
-- database clock; no row when it expired or was taken over.
UPDATE rest_delivery_lease
   SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('%+d seconds', :ttl_seconds))
 WHERE operation_id = :operation_id AND kind = :kind AND environment_id = :environment_id
   AND holder = :holder AND token = :token
   AND julianday(expires_at) > julianday('now')
RETURNING operation_id, kind, holder, token, expires_at;

-- name: release_lease
UPDATE rest_delivery_lease
   SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE operation_id = :operation_id AND kind = :kind AND environment_id = :environment_id
   AND holder = :holder AND token = :token
   AND julianday(expires_at) > julianday('now');

-- name: release_two_leases
-- release_lease for two leases of one operation (an answer's mutation lease and the
-- verification claim settled with it), in one statement.
UPDATE rest_delivery_lease
   SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE operation_id = :operation_id AND environment_id = :environment_id
   AND ((kind = :kind AND holder = :holder AND token = :token)
        OR (kind = :other_kind AND holder = :other_holder AND token = :other_token))
   AND julianday(expires_at) > julianday('now');

-- name: active_slots
SELECT slot, operation_id FROM rest_delivery_capacity_reservation
 WHERE effect_conflict_domain = :domain AND released_at IS NULL ORDER BY slot;

-- name: reserve_slot
INSERT INTO rest_delivery_capacity_reservation (
    attempt_id, operation_id, environment_id, effect_conflict_domain, slot)
VALUES (:attempt_id, :operation_id, :environment_id, :domain, :slot);

-- name: release_operation_capacity
UPDATE rest_delivery_capacity_reservation
   SET released_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), release_reason = :reason
 WHERE operation_id = :operation_id AND environment_id = :environment_id
   AND released_at IS NULL;

-- name: get_reservation
SELECT r.attempt_id, r.operation_id, r.effect_conflict_domain, r.slot, r.released_at,
       c.execution_state, c.remote_effect, c.attempt_ordinal AS current_attempt,
       a.attempt_ordinal
  FROM rest_delivery_capacity_reservation r
  LEFT JOIN rest_delivery_child c ON c.operation_id = r.operation_id
  LEFT JOIN rest_delivery_attempt a ON a.attempt_id = r.attempt_id
 WHERE r.attempt_id = :attempt_id AND r.environment_id = :environment_id;

-- name: release_reservation
UPDATE rest_delivery_capacity_reservation
   SET released_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), release_reason = :reason
 WHERE attempt_id = :attempt_id AND environment_id = :environment_id
   AND released_at IS NULL;

-- name: insert_audit
INSERT INTO rest_delivery_audit (
    environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
    from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
VALUES (:environment_id, :operation_namespace, :tenant_id, :actor, :operation_id,
        :transition_id, :from_state, :to_state, :revision, :reconciliation_id,
        :evidence_digest, :digests);

-- name: insert_audits
-- A batch (UnitOfWork.run_many) of insert_audit rows, run with executemany.
INSERT INTO rest_delivery_audit (
    environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
    from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
VALUES (:environment_id, :operation_namespace, :tenant_id, :actor, :operation_id,
        :transition_id, :from_state, :to_state, :revision, :reconciliation_id,
        :evidence_digest, :digests);

-- name: prior_reconciliation
SELECT reconciliation_id, evidence_digest FROM rest_delivery_audit
 WHERE operation_id = :operation_id AND environment_id = :environment_id
   AND (reconciliation_id IS NOT NULL OR evidence_digest IS NOT NULL);

-- name: audit_transitions_at_revision
-- The transitions recorded at one revision of an operation (what produced its current tuple).
SELECT transition_id FROM rest_delivery_audit
 WHERE operation_id = :operation_id AND environment_id = :environment_id
   AND revision = :revision;

-- name: list_audit
-- The environment's audit records, oldest first: of one operation and, for a delivery, its
-- children (:operation_id NULL: every operation), recorded at or after :since (NULL: always).
SELECT audit_id, at, actor, operation_id, operation_namespace, tenant_id, transition_id,
       from_state, to_state, revision, reconciliation_id, evidence_digest, digests
  FROM rest_delivery_audit
 WHERE environment_id = :environment_id
   AND (:operation_id IS NULL OR operation_id = :operation_id
        OR substr(operation_id, 1, length(:operation_id) + 1) = :operation_id || '_')
   AND (:since IS NULL OR julianday(at) >= julianday(:since))
 ORDER BY audit_id
 LIMIT :limit;

-- name: list_operator_actions
-- The audited operator actions (transition ids operator_<command>) of some operations, oldest
-- first.
SELECT audit_id, operation_id, transition_id, actor, from_state, to_state, revision,
       reconciliation_id, evidence_digest, digests, at
  FROM rest_delivery_audit
 WHERE environment_id = :environment_id
   AND operation_id IN (SELECT value FROM json_each(:operation_ids))
   AND substr(transition_id, 1, 9) = 'operator_'
 ORDER BY audit_id;

-- name: insert_operator_audit
-- insert_audit of one operator action, returning its audit id and journal time.
INSERT INTO rest_delivery_audit (
    environment_id, operation_namespace, tenant_id, actor, operation_id, transition_id,
    from_state, to_state, revision, reconciliation_id, evidence_digest, digests)
VALUES (:environment_id, :operation_namespace, :tenant_id, :actor, :operation_id,
        :transition_id, :from_state, :to_state, :revision, :reconciliation_id,
        :evidence_digest, :digests)
RETURNING audit_id, at;

-- name: revocations
-- The deny-only revocation list of the environment, profiles first.
SELECT kind, ref, reason, revoked_by, revoked_at FROM rest_delivery_revocation
 WHERE environment_id = :environment_id ORDER BY kind DESC, ref;

-- name: revocation_history
-- The newest audited revoke/unrevoke changes of the environment, newest first.
SELECT actor, transition_id, digests, at FROM rest_delivery_audit
 WHERE environment_id = :environment_id
   AND transition_id IN ('revocation_revoke', 'revocation_unrevoke')
 ORDER BY audit_id DESC LIMIT :limit;

-- name: insert_revocation
INSERT INTO rest_delivery_revocation (environment_id, kind, ref, reason, revoked_by)
VALUES (:environment_id, :kind, :ref, :reason, :actor)
ON CONFLICT (environment_id, kind, ref) DO NOTHING;

-- name: delete_revocation
DELETE FROM rest_delivery_revocation
 WHERE environment_id = :environment_id AND kind = :kind AND ref = :ref;

-- name: record_parent_authority
-- What a new submit of the parent's children is checked against (set once, at admission).
UPDATE rest_delivery_parent
   SET profile_ref = :profile_ref, binding_ref = :binding_ref,
       identity_valid_until = :identity_valid_until
 WHERE parent_id = :parent_id AND environment_id = :environment_id;

-- name: submit_authority
-- A parent's row (with its recorded profile, binding and identity expiry), the revocations
-- naming them, and the database clock the expiry is judged by (no second round trip for it).
SELECT p.*, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS journal_now,
       r.kind AS revoked_kind, r.ref AS revoked_ref, r.reason AS revoked_reason,
       r.revoked_by, r.revoked_at
  FROM rest_delivery_parent p
  LEFT JOIN rest_delivery_revocation r
    ON r.environment_id = p.environment_id
   AND ((r.kind = 'profile' AND r.ref = p.profile_ref)
        OR (r.kind = 'binding' AND r.ref = p.binding_ref))
 WHERE p.parent_id = :parent_id AND p.environment_id = :environment_id
 ORDER BY r.kind DESC;
-- name: expire_observations
DELETE FROM rest_delivery_observation
 WHERE environment_id = :environment_id
   AND julianday(observed_at) < julianday('now') - :days
   AND operation_id IN (
       SELECT c.operation_id FROM rest_delivery_child c
         JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
        WHERE c.environment_id = :environment_id AND c.execution_state = 'FINALIZED'
          AND p.profile_contract_digest = :profile_contract_digest);
-- Distributed rate limits (0003_rate_limits): keyed by receiver authority and principal, not
-- by environment. BEGIN IMMEDIATE already serializes every turn taken on this file.

-- name: lock_rate_bucket
INSERT INTO rest_delivery_rate_bucket (authority, principal, kind, next_turn_at)
VALUES (:authority, :principal, :kind, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
ON CONFLICT (authority, principal, kind) DO UPDATE SET kind = excluded.kind
RETURNING next_turn_at, strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now;

-- name: advance_rate_bucket
UPDATE rest_delivery_rate_bucket SET next_turn_at = :next_turn_at
 WHERE authority = :authority AND principal = :principal AND kind = :kind;

-- name: live_active_slots
-- The slots of a scope held now: not released, within their bound, under a live mutation lease
-- (releasing that lease releases its slot).
SELECT r.slot, r.operation_id FROM rest_delivery_active_request r
  JOIN rest_delivery_lease l
    ON l.operation_id = r.operation_id AND l.kind = 'mutation' AND l.token = r.lease_token
 WHERE r.authority = :authority AND r.principal = :principal
   AND julianday(r.expires_at) > julianday('now') AND julianday(l.expires_at) > julianday('now')
 ORDER BY r.slot;

-- name: claim_active_slot
-- A slot live_active_slots did not list (the caller holds the write lock since).
INSERT INTO rest_delivery_active_request (
    authority, principal, slot, holder, operation_id, lease_token, token, expires_at)
VALUES (:authority, :principal, :slot, :holder, :operation_id, :lease_token, 1, :expires_at)
ON CONFLICT (authority, principal, slot) DO UPDATE
   SET holder = excluded.holder, operation_id = excluded.operation_id,
       lease_token = excluded.lease_token, token = rest_delivery_active_request.token + 1,
       expires_at = excluded.expires_at
RETURNING slot, token;

-- name: release_active_slot
UPDATE rest_delivery_active_request
   SET expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE authority = :authority AND principal = :principal AND slot = :slot
   AND holder = :holder AND token = :token
   AND julianday(expires_at) > julianday('now');

-- name: record_payload_retention
-- The profile's retention.payload_days of a new parent (set once, at admission).
UPDATE rest_delivery_parent SET payload_days = :payload_days
 WHERE parent_id = :parent_id AND environment_id = :environment_id;

-- name: retention_children
-- Every child of the environment, and every child elsewhere in this database whose payload or
-- payload document key one of them also uses, with its parent's retention facts: whether the
-- parent was admitted more than payload_days ago by the database clock, and whether its
-- payloads already expired.
WITH used AS (
    SELECT payload_key AS artifact_key FROM rest_delivery_child
     WHERE environment_id = :environment_id
    UNION
    SELECT payload_document_key FROM rest_delivery_child
     WHERE environment_id = :environment_id)
SELECT c.parent_id, c.operation_id, c.ordinal, c.environment_id, c.payload_key,
       c.payload_document_key, c.execution_state, c.remote_effect, c.acknowledgement_state,
       c.verification_state, c.checkpoint_state,
       p.payload_days, p.admitted_at, p.payloads_expired_at,
       (p.payload_days IS NOT NULL
        AND julianday(p.admitted_at) < julianday('now') - p.payload_days) AS aged
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE c.environment_id = :environment_id
    OR c.payload_key IN (SELECT artifact_key FROM used)
    OR c.payload_document_key IN (SELECT artifact_key FROM used)
 ORDER BY p.admitted_at, c.parent_id, c.ordinal;

-- name: expire_parent_payloads
-- Mark one parent's payloads expired (once); its row is returned only when this call did it.
UPDATE rest_delivery_parent
   SET payloads_expired_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
 WHERE parent_id = :parent_id AND environment_id = :environment_id
   AND payloads_expired_at IS NULL
RETURNING payloads_expired_at;

-- name: journal_id
SELECT journal_id FROM rest_delivery_journal WHERE singleton = 1;

-- name: record_namespace
INSERT INTO rest_delivery_namespace
    (operation_namespace, platform_instance_id, tenant_id, environment_id, namespace_revision)
VALUES (:operation_namespace, :platform_instance_id, :tenant_id, :environment_id,
        :namespace_revision)
ON CONFLICT (operation_namespace) DO NOTHING;

-- name: journal_namespaces
SELECT operation_namespace, platform_instance_id, tenant_id, environment_id, namespace_revision
  FROM rest_delivery_namespace ORDER BY operation_namespace;

-- name: live_leases_of_parent
-- The unexpired leases on a delivery and its children (ids ``<parent>_NNNN``), soonest first.
SELECT operation_id, kind, holder, token, expires_at
  FROM rest_delivery_lease
 WHERE environment_id = :environment_id
   AND (operation_id = :parent_id OR operation_id LIKE :children ESCAPE '\')
   AND julianday(expires_at) > julianday('now')
 ORDER BY expires_at, operation_id, kind;

-- Metrics (dpone.journal._metrics): one read-only transaction of grouped reads for
-- `dpone metrics serve`; no operation id, digest or namespace leaves these groups.

-- name: metrics_read_only
-- The first statement of the metrics transaction. A DEFERRED transaction (the journal's read
-- kind) already reads one WAL snapshot from its first read of a table on, and nothing here
-- writes: there is nothing to set.
SELECT 1 AS read_only;

-- name: metrics_children
-- The environment's children grouped by state and by what their delivery records: profile ref,
-- binding ref, whether its remote identity attestation has expired (database clock), effect
-- domain and remote-job slots; how many, and the oldest last update among them.
SELECT p.profile_ref, p.binding_ref,
       (p.identity_valid_until IS NOT NULL
        AND julianday(p.identity_valid_until) <= julianday('now')) AS identity_expired,
       p.effect_conflict_domain, p.max_remote_jobs,
       c.execution_state, c.remote_effect, c.acknowledgement_state, c.verification_state,
       c.checkpoint_state, count(*) AS children, min(c.updated_at) AS oldest_update
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE c.environment_id = :environment_id
 GROUP BY p.profile_ref, p.binding_ref, identity_expired, p.effect_conflict_domain,
          p.max_remote_jobs, c.execution_state, c.remote_effect, c.acknowledgement_state,
          c.verification_state, c.checkpoint_state;

-- name: metrics_unknown_effects
-- Children whose remote effect is UNKNOWN, by profile ref: how many, and since when the oldest
-- is uncertain (its current attempt's start; its last update when it has no attempt row).
SELECT p.profile_ref, count(*) AS children,
       min(coalesce(a.started_at, c.updated_at)) AS oldest_since
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
  LEFT JOIN rest_delivery_attempt a
    ON a.operation_id = c.operation_id AND a.attempt_ordinal = c.attempt_ordinal
 WHERE c.environment_id = :environment_id AND c.remote_effect = 'UNKNOWN'
 GROUP BY p.profile_ref;

-- name: metrics_receipts
-- Receipts still observed (a receipt id on a child in an :observing execution state), by
-- profile ref: how many, and when the oldest was recorded (its attempt's outcome time).
SELECT p.profile_ref, count(*) AS children,
       min(coalesce(a.outcome_at, c.updated_at)) AS oldest_since
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
  LEFT JOIN rest_delivery_attempt a
    ON a.operation_id = c.operation_id AND a.attempt_ordinal = c.attempt_ordinal
 WHERE c.environment_id = :environment_id
   AND c.execution_state IN (SELECT value FROM json_each(:observing))
   AND json_extract(c.receipt, '$.id') IS NOT NULL
 GROUP BY p.profile_ref;

-- name: metrics_capacity
-- Remote-job slots held now in the effect domains this environment's deliveries use, by any
-- environment (a domain's slots are shared); the profile ref only of this environment's holders.
SELECT r.effect_conflict_domain, (r.environment_id = :environment_id) AS here,
       CASE WHEN r.environment_id = :environment_id THEN p.profile_ref END AS profile_ref,
       count(*) AS held
  FROM rest_delivery_capacity_reservation r
  LEFT JOIN rest_delivery_child c ON c.operation_id = r.operation_id
  LEFT JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE r.released_at IS NULL
   AND r.effect_conflict_domain IN (SELECT effect_conflict_domain FROM rest_delivery_parent
                                     WHERE environment_id = :environment_id)
 GROUP BY 1, 2, 3;

-- name: metrics_parents
-- The environment's deliveries by profile ref: the newest boundary end and admission.
SELECT profile_ref, count(*) AS parents, max(boundary_to) AS newest_boundary_end,
       max(admitted_at) AS newest_admitted_at
  FROM rest_delivery_parent
 WHERE environment_id = :environment_id
 GROUP BY profile_ref;

-- name: metrics_recovery_actions
-- Audited operator recovery actions of the environment, by transition id.
SELECT transition_id, count(*) AS actions
  FROM rest_delivery_audit
 WHERE environment_id = :environment_id
   AND (substr(transition_id, 1, 9) = 'operator_' OR transition_id = 'capacity_repair')
 GROUP BY transition_id;

-- name: metrics_retention_children
-- retention_children's rows (and the profile ref) of this environment's deliveries old enough to
-- be pruned (the same aged test) and not pruned yet: whether each is eligible is
-- dpone.journal._retention's decision.
SELECT c.parent_id, c.operation_id, c.ordinal, c.environment_id, c.payload_key,
       c.payload_document_key, c.execution_state, c.remote_effect, c.acknowledgement_state,
       c.verification_state, c.checkpoint_state,
       p.payload_days, p.admitted_at, p.payloads_expired_at, p.profile_ref, 1 AS aged
  FROM rest_delivery_child c
  JOIN rest_delivery_parent p ON p.parent_id = c.parent_id
 WHERE p.environment_id = :environment_id AND p.payloads_expired_at IS NULL
   AND p.payload_days IS NOT NULL
   AND julianday(p.admitted_at) < julianday('now') - p.payload_days
 ORDER BY p.admitted_at, c.parent_id, c.ordinal;
