"""How a submit answer is classified by the profile: a status certified as refused before any
effect is its own outcome; uncertified, the same status stays unrecognized. A profile that
gives one status two meanings does not compile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest
from ruamel.yaml import YAML

from dpone.compiler import compile_workload
from dpone.contracts import DponeError
from dpone.contracts.profile import OperationProfile
from dpone.contracts.sealed import SealedChild
from dpone.executor.supervisor._submit import classify
from dpone.executor.transport import Response
from support.common import EXAMPLES

NO_SEALED = cast(SealedChild, None)  # only a duplicate answer reads the sealed child


def _profile(name: str) -> OperationProfile:
    return compile_workload(EXAMPLES / "workloads" / f"{name}.yaml", EXAMPLES).plan.profile.snapshot


def _uncertified(profile: OperationProfile) -> OperationProfile:
    ack = profile.acknowledgement.model_copy(update={"rejected_before_effect_statuses": ()})
    return profile.model_copy(update={"acknowledgement": ack})


def _answer(status: int, body: dict[str, object] | None = None) -> Response:
    return Response(status=status, headers={}, body=json.dumps(body or {}).encode())


@pytest.mark.parametrize("workload", ["measurements_sync", "measurements_async"])
@pytest.mark.parametrize("status", [401, 403])
def test_a_certified_refusal_is_rejected_before_effect(workload: str, status: int) -> None:
    profile = _profile(workload)
    assert profile.acknowledgement.rejected_before_effect_statuses == (401, 403)
    assert classify(profile, NO_SEALED, _answer(status)) == (
        "rejected_before_effect", {"http_status": status})


@pytest.mark.parametrize("workload", ["measurements_sync", "measurements_async"])
def test_an_uncertified_refusal_stays_unrecognized(workload: str) -> None:
    profile = _uncertified(_profile(workload))
    assert classify(profile, NO_SEALED, _answer(401)) == (
        "response_not_recognized", {"http_status": 401})


def test_other_answers_keep_their_meaning() -> None:
    profile = _profile("measurements_sync")
    assert classify(profile, NO_SEALED, _answer(429))[0] == "throttled"
    assert classify(profile, NO_SEALED, _answer(404))[0] == "response_not_recognized"
    assert classify(profile, NO_SEALED, _answer(200, {"batch_id": "b-1", "accepted_rows": 3,
                                                      "rejected_rows": 0}))[0] == "sync_success"


def _certify(registry: Path, profile: str, statuses: list[int],
             accepted: list[int] | None = None) -> None:
    path = registry / "profiles" / f"{profile}.yaml"
    yaml = YAML()
    document = yaml.load(path.read_text(encoding="utf-8"))
    document["acknowledgement"]["rejected_before_effect_statuses"] = statuses
    if accepted is not None:
        document["acknowledgement"]["accepted_statuses"] = accepted
    with path.open("w", encoding="utf-8") as handle:
        yaml.dump(document, handle)


@pytest.mark.parametrize(("statuses", "role"), [
    ([401, 422], "listed in accepted_statuses"),
    ([401, 409], "listed in duplicate.statuses"),
    ([403, 425], "a throttle status"),
])
def test_a_status_with_two_meanings_does_not_compile(registry: Path, statuses: list[int],
                                                     role: str) -> None:
    _certify(registry, "mock.dataset-jobs@1", statuses, accepted=[202, 422])
    with pytest.raises(DponeError) as refused:
        compile_workload(registry / "workloads" / "measurements_async.yaml", registry)
    assert refused.value.code == "profile.status_conflict"
    assert f"status {statuses[1]}" in refused.value.message and role in refused.value.message
    assert refused.value.location is not None
    assert refused.value.location.path == "acknowledgement.rejected_before_effect_statuses[1]"


@pytest.mark.parametrize("status", [200, 302, 500])
def test_only_a_client_error_can_be_certified_as_refused_before_effect(registry: Path,
                                                                       status: int) -> None:
    _certify(registry, "mock.batch-ndjson@1", [401, status])
    with pytest.raises(DponeError) as refused:
        compile_workload(registry / "workloads" / "measurements_sync.yaml", registry)
    assert refused.value.code == "schema.invalid_value"
