-- The journal's own identity and the environments it serves.
--
-- rest_delivery_journal holds one row: the journal id, a random id made when this migration
-- runs, so two journals are never mistaken for one another (an artifact store records the
-- journal it belongs to under this id, and a run that pairs the store with another journal of
-- the same operation namespace is refused before any request). rest_delivery_namespace records
-- the environment identity (platform instance, tenant, environment, namespace revision) of
-- every operation namespace a run has written into this journal, insert-only.
CREATE TABLE rest_delivery_journal (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    journal_id  text NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO rest_delivery_journal (singleton, journal_id)
VALUES (true, 'jrn_' || replace(gen_random_uuid()::text, '-', ''));

CREATE TABLE rest_delivery_namespace (
    operation_namespace   text PRIMARY KEY,
    platform_instance_id  text NOT NULL,
    tenant_id             text NOT NULL,
    environment_id        text NOT NULL,
    namespace_revision    integer NOT NULL CHECK (namespace_revision >= 1),
    recorded_at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
