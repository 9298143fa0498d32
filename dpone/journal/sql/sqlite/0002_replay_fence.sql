-- The replay authority of an admitted parent: whether its plan's receiver fence is certified in
-- this environment, and how many submit attempts the profile allows. A same-key replay is
-- refused by the journal itself unless both permit it.
ALTER TABLE rest_delivery_parent
    ADD COLUMN replay_fence_certified integer NOT NULL DEFAULT 0
        CHECK (replay_fence_certified IN (0, 1));
ALTER TABLE rest_delivery_parent
    ADD COLUMN max_submit_attempts integer NOT NULL DEFAULT 1
        CHECK (max_submit_attempts BETWEEN 1 AND 100);
