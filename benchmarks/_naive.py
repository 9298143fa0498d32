"""The naive peer of the delivery benchmark: what a user writes instead of dpone.

Run (the benchmark does, as a subprocess like ``dpone deliver``):
``python benchmarks/_naive.py sync|async SOURCE_CSV BASE_URL RESOURCE`` with the bearer token in
``$DPONE_CONN_MOCK_MEASUREMENTS_TOKEN``; prints one JSON line ``{"rows", "requests",
"wire_bytes", "accepted_rows"}``.

``sync_client`` is the ~20-line script the issue names: ``requests`` (the library such scripts
use), the stdlib ``csv`` module, ``json.dumps`` per row with its defaults (non-ASCII escaped, as
users leave it), 10,000-row NDJSON batches POSTed to the same endpoint with the same bearer
token and a delivery key header, ``raise_for_status``; a urllib3 ``Retry`` mounted on the
session (as the issue's script had: it would resend a POST on a 502/503/504, the duplicate dpone
exists to prevent); no journal, no verification beyond summing the answers' counters. Rows are
shaped like the mapping's NDJSON (same field names and JSON types); a CSV reader cannot tell a
null from an empty string, so empty text fields become null here.

``async_client`` is its CSV+gzip twin for the job protocol: 100,000-row CSV files (the async
profile's ``max_rows``) written with ``csv.writer``, gzip at the profile's level 6, one
multipart POST per file, then a status poll until the job is complete.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

TOKEN_ENV = "DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
NULLABLE = ("site", "reading", "note")


def typed(row: dict[str, str]) -> dict[str, Any]:
    """One CSV row as the mapping types it (date and timestamp stay ISO text)."""
    return {"business_date": row["business_date"], "sensor_id": row["sensor_id"],
            "site": row["site"] or None,
            "reading": float(row["reading"]) if row["reading"] else None,
            "sample_count": int(row["sample_count"]), "note": row["note"] or None,
            "measured_at": row["measured_at"], "is_valid": row["is_valid"] == "true"}


def session(token: str) -> requests.Session:
    http = requests.Session()
    http.headers["Authorization"] = f"Bearer {token}"
    retry = Retry(total=3, backoff_factor=0.5, status_forcelist=(502, 503, 504),
                  allowed_methods=None)
    http.mount("http://", HTTPAdapter(max_retries=retry))
    return http


def sync_client(source: str, url: str, token: str, batch_rows: int = 10_000) -> dict[str, int]:
    http, totals = session(token), {"rows": 0, "requests": 0, "wire_bytes": 0, "accepted_rows": 0}

    def post(batch: list[dict[str, Any]]) -> None:
        body = "".join(json.dumps(row) + "\n" for row in batch).encode("utf-8")
        response = http.post(url, data=body, timeout=60, headers={
            "Content-Type": "application/x-ndjson",
            "X-Delivery-Key": f"naive-{os.getpid()}-{totals['requests']}"})
        response.raise_for_status()
        totals["accepted_rows"] += response.json()["accepted_rows"]
        totals["requests"] += 1
        totals["rows"] += len(batch)
        totals["wire_bytes"] += len(body)

    with open(source, newline="", encoding="utf-8") as handle:
        batch = []
        for row in csv.DictReader(handle):
            batch.append(typed(row))
            if len(batch) == batch_rows:
                post(batch)
                batch = []
        if batch:
            post(batch)
    return totals


def chunks(source: str, size: int) -> Iterator[tuple[list[str], list[list[str]]]]:
    with open(source, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header, rows = next(reader), []
        for row in reader:
            rows.append(row)
            if len(rows) == size:
                yield header, rows
                rows = []
        if rows:
            yield header, rows


def async_client(source: str, base_url: str, token: str,
                 file_rows: int = 100_000) -> dict[str, int]:
    http, totals = session(token), {"rows": 0, "requests": 0, "wire_bytes": 0, "accepted_rows": 0}
    for number, (header, rows) in enumerate(chunks(source, file_rows)):
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        data = gzip.compress(text.getvalue().encode("utf-8"), compresslevel=6)
        dates = sorted({row[0] for row in rows})
        response = http.post(f"{base_url}/mock/v1/dataset-jobs", timeout=120, files={
            "file": (f"naive-{os.getpid()}-{number}.csv.gz", data, "application/gzip")},
            data={"range_start": dates[0], "range_end": dates[-1]})
        response.raise_for_status()
        job = response.json()["job_id"]
        while (status := http.get(f"{base_url}/mock/v1/dataset-jobs/{job}", timeout=30).json()
               )["phase"] not in ("complete", "error", "cancelled", "incomplete"):
            time.sleep(0.1)
        totals["accepted_rows"] += status["rows_accepted"]
        totals["requests"] += 1
        totals["rows"] += len(rows)
        totals["wire_bytes"] += len(data)
    return totals


def main(argv: list[str]) -> int:
    family, source, base_url, resource = argv
    token = os.environ[TOKEN_ENV]
    if family == "sync":
        totals = sync_client(source, f"{base_url}/mock/v1/batches/{resource}", token)
    else:
        totals = async_client(source, base_url, token)
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
