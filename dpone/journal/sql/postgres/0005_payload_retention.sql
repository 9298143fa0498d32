-- Payload retention: the profile's retention.payload_days, recorded per parent at admission,
-- and the moment `dpone admin prune --apply` expired the parent's sealed payloads.
--
-- A parent is eligible once it was admitted more than payload_days ago by the database clock
-- and every child is settled (finalized with its checkpoint promoted or no effect proven). The
-- prune transaction sets payloads_expired_at (once) and writes one operator_prune audit row per
-- parent; the payload bytes and documents are then deleted from the artifact store, except a
-- key another parent that is not expired still references. Recovery commands that need the
-- bytes (resume, reconcile) refuse an expired parent with retention.payloads_expired. Parents
-- admitted before this migration hold NULL payload_days and are never eligible. The compact
-- effect authority (child rows, receipts, watermarks, audit) is never deleted.
ALTER TABLE rest_delivery_parent ADD COLUMN payload_days integer
    CHECK (payload_days BETWEEN 1 AND 3650);
ALTER TABLE rest_delivery_parent ADD COLUMN payloads_expired_at timestamptz;
