"""The effect-domain fence during a delivery, on both journals: the parts of one heavily split
append day are all delivered, and a generation made stale before its submit is refused and
recorded without a request."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections import Counter
from pathlib import Path

from dpone.contracts import RemoteEffect
from dpone.executor.supervisor import DeliveryBlocked, DeliveryCompleted, parent_admission
from support.common import EXAMPLES
from support.delivery import HarnessFactory, row_key

WEEK = (dt.date(2026, 8, 1), dt.date(2026, 8, 8))


def _small_batches(root: Path) -> Path:
    """The example registry with a sync profile that takes at most 60 rows a request."""
    registry = root / "registry"
    shutil.copytree(EXAMPLES, registry)
    profile = registry / "profiles" / "mock.batch-ndjson@1.yaml"
    text = profile.read_text(encoding="utf-8")
    text = re.sub(r"^  max_rows: \d+$", "  max_rows: 60", text, flags=re.M)
    text = re.sub(r"^  planning_rows: \d+$", "  planning_rows: 50", text, flags=re.M)
    profile.write_text(text, encoding="utf-8")
    return registry


def test_every_part_of_a_split_append_day_is_delivered(harness: HarnessFactory,
                                                       tmp_path: Path) -> None:
    h = harness("sync", WEEK, registry=_small_batches(tmp_path))
    scopes = Counter((c.descriptor.scope_from, c.descriptor.scope_to) for c in h.topology.children)
    assert max(scopes.values()) > 1, "the fixture must split at least one day into parts"

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert result.checkpoint_frontier == len(h.topology.children)
    ledger = h.ledger()
    assert ledger["mutations_total"] == len(h.topology.children)
    assert ledger["duplicate_mutations"] == 0
    assert Counter(map(row_key, h.ledger_rows())) == Counter(map(row_key, h.sealed.sealed_rows()))


def test_a_generation_made_stale_before_its_submit_is_refused_without_a_request(
        harness: HarnessFactory) -> None:
    older = harness("async", (dt.date(2026, 8, 1), dt.date(2026, 8, 5)), store="older")
    older.journal.admit_parent(parent_admission(older.plan, older.topology))
    newer = harness("async", (dt.date(2026, 8, 1), dt.date(2026, 8, 9)), store="newer")
    assert isinstance(newer.run(), DeliveryCompleted)
    posts = newer.count("POST")

    result = older.run()

    assert isinstance(result, DeliveryBlocked), result
    assert result.code == "REST_DELIVERY_STALE_GENERATION"
    assert result.remote_effect is RemoteEffect.NONE_PROVEN
    assert result.allowed_actions == ("inspect_newer_generation",)
    child = older.child(1)
    assert child.state_name == "final_not_started"
    assert child.last_error_code == "REST_DELIVERY_STALE_GENERATION"
    assert (1, "sealed_pre_submit_fence_refused") in older.steps
    assert older.count("POST") == posts
