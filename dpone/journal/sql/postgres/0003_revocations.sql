-- The deny-only revocation list of an environment and the submit authority of each parent.
--
-- A row of rest_delivery_revocation names one operation profile (id@version) or one connection
-- binding (id) that no child of the environment may submit under: every new SUBMITTING
-- transaction reads it after taking the environment row FOR SHARE, and a revocation takes that
-- row FOR UPDATE, so a revocation committed before a SUBMITTING transaction refuses it. The list
-- only denies: it never enables a behaviour or reinterprets a pinned plan, and it never blocks
-- inspection, receipt observation or reconciliation. Unrevoking deletes the row; every change
-- is also an audit row (revocation_revoke / revocation_unrevoke).
--
-- A parent records at admission what the list and the identity expiry are checked against:
-- its plan's profile ref, binding id and the binding's remote_identity.valid_until (compared
-- with the database clock). Parents admitted before this migration hold NULLs and are checked
-- against nothing.
CREATE TABLE rest_delivery_revocation (
    environment_id  text NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('profile', 'binding')),
    ref             text NOT NULL CHECK (length(ref) BETWEEN 1 AND 256),
    reason          text NOT NULL,
    revoked_by      text NOT NULL,
    revoked_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (environment_id, kind, ref)
);

ALTER TABLE rest_delivery_parent ADD COLUMN profile_ref text;
ALTER TABLE rest_delivery_parent ADD COLUMN binding_ref text;
ALTER TABLE rest_delivery_parent ADD COLUMN identity_valid_until timestamptz;
