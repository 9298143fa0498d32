"""The receiver variants that contradict a claim of the async profile (for certification
tests), on a manual clock; without them the receiver behaves as certified (the other suites)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from dpone.receiver import ManualClock, ReceiverConfig, ReceiverThread
from support.receiver import TOKEN, csv_gz, job, submit_job

FILENAME = "5e" * 32 + ".csv.gz"
OTHER_BYTES = csv_gz("day,sensor\n2026-09-01,s-9\n")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@contextlib.contextmanager
def _client(clock: ManualClock, **variant: Any) -> Iterator[httpx.Client]:
    config = ReceiverConfig(token=TOKEN, processing_seconds=1.0, clock=clock, **variant)
    with ReceiverThread(config) as receiver, httpx.Client(
            base_url=receiver.base_url, headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        yield client


def test_a_forgetting_receiver_takes_a_key_again_once_it_is_old_enough(
        clock: ManualClock) -> None:
    with _client(clock, forget_keys_after_seconds=5.0) as client:
        first = submit_job(client, FILENAME).json()["job_id"]
        clock.advance(4.9)
        assert submit_job(client, FILENAME).status_code == 409
        clock.advance(0.1)
        again = submit_job(client, FILENAME)
        assert again.status_code == 202
        assert again.json()["job_id"] != first
        assert submit_job(client, FILENAME).json() == {"job_id": again.json()["job_id"],
                                                        "filename": FILENAME}
        assert job(client, first).status_code == 200  # the job and its receipt stay


def test_a_rebinding_receiver_takes_the_same_key_with_other_bytes_as_a_new_job(
        clock: ManualClock) -> None:
    with _client(clock, rebind_keys=True) as client:
        first = submit_job(client, FILENAME).json()["job_id"]
        assert submit_job(client, FILENAME).json()["job_id"] == first  # same bytes: 409
        other = submit_job(client, FILENAME, OTHER_BYTES)
        assert other.status_code == 202
        assert other.json()["job_id"] != first


def test_by_default_other_bytes_under_a_known_key_are_a_duplicate(clock: ManualClock) -> None:
    with _client(clock) as client:
        first = submit_job(client, FILENAME).json()["job_id"]
        clock.advance(3600)
        repeated = submit_job(client, FILENAME, OTHER_BYTES)
        assert (repeated.status_code, repeated.json()["job_id"]) == (409, first)


def test_a_receipt_ttl_makes_the_receipt_answer_410_once_the_job_is_that_old(
        clock: ManualClock) -> None:
    with _client(clock, receipt_ttl_seconds=3.0) as client:
        job_id = submit_job(client, FILENAME).json()["job_id"]
        clock.advance(2.9)
        assert job(client, job_id).status_code == 200
        clock.advance(0.1)
        expired = job(client, job_id)
        assert (expired.status_code, expired.json()["error"]) == (410, "receipt_expired")
        found = client.get(f"/mock/v1/dataset-job-keys/sha256:{'5e' * 32}")
        assert found.status_code == 200  # the lookup by key still finds the job


@pytest.mark.parametrize("variant", [{"forget_keys_after_seconds": 0},
                                     {"receipt_ttl_seconds": -1.0}])
def test_a_variant_needs_a_positive_number_of_seconds(variant: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        ReceiverConfig(**variant)  # type: ignore[arg-type]
