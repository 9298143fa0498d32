"""The read-only lookup by key: the job submitted under a key, or 404; never a mutation."""

from __future__ import annotations

import httpx
import pytest

from dpone.receiver import ReceiverConfig, ReceiverThread
from support.receiver import TOKEN, install, job, ledger, rule, submit_job

HEX = "3f9a" + "0" * 60
FILENAME = HEX + ".csv.gz"
KEYS_PATH = "/mock/v1/dataset-job-keys"


def lookup(client: httpx.Client, key: str) -> httpx.Response:
    return client.get(f"{KEYS_PATH}/{key}")


def test_a_key_names_the_job_submitted_under_it(client: httpx.Client) -> None:
    job_id = submit_job(client, FILENAME).json()["job_id"]
    before = ledger(client)

    for key in (f"sha256:{HEX}", HEX, f"sha256%3A{HEX}"):
        found = lookup(client, key)
        assert found.status_code == 200, found.text
        assert found.json() == job(client, job_id).json()
        assert found.json()["filename"] == FILENAME  # the echo of the key

    after = ledger(client)
    assert after["mutations"] == before["mutations"] and after["duplicate_mutations"] == 0
    assert after["requests"][f"GET {KEYS_PATH}/sha256:{HEX}"] == 2  # reads, counted as such
    assert after["requests"][f"GET {KEYS_PATH}/{HEX}"] == 1


@pytest.mark.parametrize("key", [f"sha256:{'7b' * 32}", "sha256:" + HEX[:-1], HEX.upper(),
                                 FILENAME, "job-00000000-000001"])
def test_no_job_under_another_key_is_404(client: httpx.Client, key: str) -> None:
    submit_job(client, FILENAME)
    missing = lookup(client, key)
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"


def test_an_expired_receipt_is_still_found_by_its_key(client: httpx.Client) -> None:
    install(client, rule("expire_receipt", "/mock/v1/dataset-jobs", status=410))
    job_id = submit_job(client, FILENAME).json()["job_id"]
    assert job(client, job_id).status_code == 410

    found = lookup(client, f"sha256:{HEX}")
    assert found.status_code == 200 and found.json()["job_id"] == job_id


def test_job_faults_never_apply_to_a_lookup(client: httpx.Client) -> None:
    """A lookup is a read: a cancel or expiry rule matching its path is not fired by it."""
    job_id = submit_job(client, FILENAME).json()["job_id"]
    install(client, rule("cancel_job", "/mock/v1/dataset-job", method="GET"),
            rule("status", KEYS_PATH, method="GET", status=503))

    assert lookup(client, f"sha256:{HEX}").status_code == 503  # the status rule fires
    assert lookup(client, f"sha256:{HEX}").status_code == 200  # the cancel rule does not
    assert job(client, job_id).json()["phase"] == "cancelled"  # fired by the job status GET
    assert ledger(client)["mutations"][0]["rows"] == 0


def test_a_restarted_receiver_holds_no_key_of_its_earlier_start() -> None:
    """Jobs and ledger share one lifetime: after a restart, nothing is held, nothing applied."""
    config = ReceiverConfig(token=TOKEN, processing_seconds=0)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with ReceiverThread(config) as first, httpx.Client(base_url=first.base_url, headers=headers,
                                                       trust_env=False) as client:
        job_id = submit_job(client, FILENAME).json()["job_id"]
        assert lookup(client, f"sha256:{HEX}").json()["job_id"] == job_id
    with ReceiverThread(config) as second, httpx.Client(base_url=second.base_url,
                                                        headers=headers, trust_env=False) as client:
        assert lookup(client, f"sha256:{HEX}").status_code == 404
        assert ledger(client)["mutations"] == []
        again = submit_job(client, FILENAME).json()["job_id"]
        assert again != job_id  # a fresh boot id: the old receipt never names the new job
        assert lookup(client, f"sha256:{HEX}").json()["job_id"] == again
