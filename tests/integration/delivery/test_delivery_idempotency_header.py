"""An idempotency-key-header fence on both journals: a submit the receiver committed before the
connection dropped is replayed under the certified fence, and the first request and its replay
carry the same ``Idempotency-Key``, the child's receiver mutation key, as the receiver saw it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from dpone.executor.supervisor import DeliveryCompleted
from support.common import EXAMPLES
from support.delivery import HarnessFactory

SUBMIT = "POST /mock/v1/dataset-jobs"
FENCE = """mutation_fence:
  type: idempotency_key_header
  location: header
  value_from: receiver_mutation_key
  header_name: Idempotency-Key
  key_payload_binding: required
  certification_ref: required_before_production
  certified_environments: [local-dev]
"""


def _idempotency_registry(root: Path) -> Path:
    """The example registry whose async profile is fenced by an ``Idempotency-Key`` header
    rendered from ``{receiver_mutation_key}``, certified for local-dev."""
    registry = root / "registry"
    shutil.copytree(EXAMPLES, registry)
    profile = registry / "profiles" / "mock.dataset-jobs@1.yaml"
    text = profile.read_text(encoding="utf-8")
    text, paths = re.subn(r"^  path: /mock/v1/dataset-jobs\n",
                          "  path: /mock/v1/dataset-jobs\n  headers:\n"
                          "    Idempotency-Key: \"{receiver_mutation_key}\"\n", text, flags=re.M)
    text, fences = re.subn(r"^mutation_fence:\n(?:  .*\n)+", FENCE, text, flags=re.M)
    assert (paths, fences) == (1, 1), "the example async profile changed shape"
    profile.write_text(text, encoding="utf-8")
    return registry


def test_a_replay_under_an_idempotency_header_fence_carries_the_first_requests_key(
        harness: HarnessFactory, tmp_path: Path) -> None:
    h = harness("async", registry=_idempotency_registry(tmp_path))
    assert h.plan.fence.type == "idempotency_key_header" and h.plan.fence.certified_in_environment
    first, second = (child.identities.receiver_mutation_key for child in h.topology.children)
    assert first != second
    h.fail_submit("commit_then_drop")

    result = h.run()

    assert isinstance(result, DeliveryCompleted), result
    assert h.outcomes(1) == [(1, "submitting_fenced_replay"),
                             (2, "replay_duplicate_receipt_same_intent")]
    sent = [entry["key"] for entry in h.ledger()["idempotency_keys"]
            if entry["request"] == SUBMIT]
    assert sent == [first, first, second]  # child 1, its replay with the same key, child 2
    assert h.requests()[SUBMIT] == 3
    assert h.ledger()["duplicate_mutations"] == 0
