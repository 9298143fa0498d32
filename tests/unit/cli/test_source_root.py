"""``--source-root``: a directory used in place, an ``s3://`` prefix whose object is copied for
the run; a plan path that leaves the root is refused in both forms before anything is read, and
a PostgreSQL source needs no root."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpone.cli._source_root import source_root
from dpone.contracts import DponeError
from dpone.contracts.plan import ResolvedSource, RestDeliveryPlan
from support.source import example_plan


def _plan(registry_path: str) -> RestDeliveryPlan:
    return example_plan(ResolvedSource(type="file", format="csv", registry_path=registry_path))


def _refused(plan: RestDeliveryPlan, given: Path | str | None) -> DponeError:
    with pytest.raises(DponeError) as caught, source_root(plan, given):
        pytest.fail("the source root was accepted")
    return caught.value


@pytest.mark.parametrize("registry_path", ["../outside.csv", "data/../../outside.csv",
                                           "/etc/passwd"])
def test_a_path_that_leaves_an_s3_prefix_is_refused_before_any_request(registry_path: str) -> None:
    # No endpoint answers on port 9: a request would fail as unavailable, not as invalid.
    error = _refused(_plan(registry_path), "s3://bucket-x/prefix?endpoint_url=http://127.0.0.1:9")
    assert error.code == "input.invalid_argument" and error.exit_code == 2
    assert error.message == "the source path leaves the source root"


def test_a_malformed_s3_root_is_invalid_input() -> None:
    error = _refused(example_plan(), "s3://Not_A_Bucket/prefix")
    assert error.code == "input.invalid_argument"
    assert error.message.startswith("--source-root is not a usable s3:// URL")


def test_a_local_root_is_used_in_place(tmp_path: Path) -> None:
    with source_root(example_plan(), str(tmp_path)) as root:
        assert root == tmp_path
    error = _refused(example_plan(), tmp_path / "missing")
    assert error.code == "source.unavailable" and error.exit_code == 3


def test_a_file_source_needs_a_root_and_a_postgres_source_none() -> None:
    error = _refused(example_plan(), None)
    assert error.code == "input.invalid_argument" and "--source-root" in error.message
    postgres = example_plan(ResolvedSource(type="postgres", connection_ref="warehouse",
                                           table="measurements"))
    with source_root(postgres, None) as root:
        assert root == Path(".")
