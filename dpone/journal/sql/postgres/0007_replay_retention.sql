-- How long after a child's first attempt the admitted plan's certification proves the
-- receiver keeps its key (the key retention case's tested delay). A takeover of a lost submit
-- replays the same key only when a certification bounds it (not null) and the first attempt is
-- younger than that by the journal clock; null leaves a lost submit UNKNOWN.
ALTER TABLE rest_delivery_parent
    ADD COLUMN replay_retention_s integer CHECK (replay_retention_s >= 0);
