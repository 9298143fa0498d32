-- The journal's own identity and the environments it serves.
--
-- rest_delivery_journal holds one row: the journal id, a random id made when this migration
-- runs, so two journals are never mistaken for one another (an artifact store records the
-- journal it belongs to under this id, and a run that pairs the store with another journal of
-- the same operation namespace is refused before any request). rest_delivery_namespace records
-- the environment identity (platform instance, tenant, environment, namespace revision) of
-- every operation namespace a run has written into this journal, insert-only.
CREATE TABLE rest_delivery_journal (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    journal_id  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
INSERT INTO rest_delivery_journal (singleton, journal_id)
VALUES (1, 'jrn_' || lower(hex(randomblob(16))));

CREATE TABLE rest_delivery_namespace (
    operation_namespace   TEXT PRIMARY KEY,
    platform_instance_id  TEXT NOT NULL,
    tenant_id             TEXT NOT NULL,
    environment_id        TEXT NOT NULL,
    namespace_revision    INTEGER NOT NULL CHECK (namespace_revision >= 1),
    recorded_at           TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
