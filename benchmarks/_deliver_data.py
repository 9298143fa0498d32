"""The delivery benchmark's dataset and scratch registry.

The dataset is the example registry's ``measurements`` table (its mapping: business_date,
sensor_id, site, reading, sample_count, note, measured_at, is_valid; Cyrillic text, nulls and
empty strings) in the example's CSV dialect, written by the example generator's vocabularies and
daily shape (weekday 110, weekend 40, days 14-16 of a month 240, day 23 3), scaled to N rows over
:data:`DAYS` business days from 2026-08-01.

The registry is a copy of ``examples/`` whose binding points at the benchmark's receiver and
whose two profiles are changed only where the benchmark needs it:

* ``mock.batch-ndjson@1``: ``max_rows`` and ``planning_rows`` 10,000 (10,000-row batches; a
  day is split into parts of 10,000 rows) and byte limits raised so that rows, not bytes, cut
  the children; its rate certifies 4 remote-job slots (with its ``max_in_flight_children: 4``
  and ``max_active_requests: 4``: four children in flight) and a submit rate the line-counting
  receiver takes;
* ``mock.dataset-jobs@1``: ``poll_interval_s: 0`` (the receiver finishes jobs at once) and
  submit and poll rates the line-counting receiver takes (the example's 30 submits a minute
  would make the run wait between jobs).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import random
import shutil
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FIRST_DAY = dt.date(2026, 8, 1)
DAYS = 60
INTERVAL = (FIRST_DAY, FIRST_DAY + dt.timedelta(days=DAYS))
BATCH_ROWS = 10_000
WORKLOADS = {"sync": ("measurements_sync", "measurement_readings"),
             "async": ("measurements_async", "measurements")}
PROFILE_EDITS = {
    "mock.batch-ndjson@1.yaml": [
        ("max_rows: 2000", f"max_rows: {BATCH_ROWS}"),
        ("planning_rows: 1500", f"planning_rows: {BATCH_ROWS}"),
        ("max_decoded_bytes: 2000000", "max_decoded_bytes: 16000000"),
        ("planning_decoded_bytes: 1500000", "planning_decoded_bytes: 12000000"),
        ("max_wire_bytes: 2000000", "max_wire_bytes: 16000000"),
        ("planning_wire_bytes: 1500000", "planning_wire_bytes: 12000000"),
        ("rate: {submit_per_minute: 600, poll_per_minute: 1, max_active_requests: 4, "
         "max_active_remote_jobs: 1}",
         "rate: {submit_per_minute: 60000, poll_per_minute: 1, max_active_requests: 4, "
         "max_active_remote_jobs: 4}"),
    ],
    "mock.dataset-jobs@1.yaml": [
        ("poll_interval_s: 2", "poll_interval_s: 0"),
        ("rate: {submit_per_minute: 30, poll_per_minute: 120,",
         "rate: {submit_per_minute: 60000, poll_per_minute: 60000,"),
    ],
}


def _generator() -> ModuleType:
    """``examples/generate_measurements.py``: its header, vocabularies and quoting."""
    spec = importlib.util.spec_from_file_location("generate_measurements",
                                                  EXAMPLES / "generate_measurements.py")
    if spec is None or spec.loader is None:
        raise RuntimeError("examples/generate_measurements.py is missing")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def day_counts(rows: int, days: int = DAYS) -> list[int]:
    """The example's daily shape over ``days`` days from :data:`FIRST_DAY`, scaled to ``rows``
    in all."""
    weights = []
    for offset in range(days):
        day = FIRST_DAY + dt.timedelta(days=offset)
        weight = 40 if day.weekday() >= 5 else 110
        if 14 <= day.day <= 16:
            weight = 240
        if day.day == 23:
            weight = 3
        weights.append(weight)
    counts = [rows * weight // sum(weights) for weight in weights]
    counts[0] += rows - sum(counts)
    return counts


def synthetic_csv(path: Path, rows: int, seed: int) -> None:
    """N rows in the example's dialect (quoted strings, empty unquoted null, ``""`` empty)."""
    gen = _generator()
    rng = random.Random(seed)
    quote = gen._quote
    sites = [quote(site) for site in gen.SITES]
    notes = [quote(note) for note in gen.NOTES]
    sensors = [quote(f"S-{index:03d}") for index in range(1, 60)]
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(",".join(gen.HEADER) + "\n")
        for offset, count in enumerate(day_counts(rows)):
            day = FIRST_DAY + dt.timedelta(days=offset)
            iso = day.isoformat()
            stamp_prefix = iso + "T"
            lines = []
            for index in range(count):
                site = "" if rng.random() < 0.05 else rng.choice(sites)
                reading = "" if rng.random() < 0.04 else repr(round(rng.uniform(-40.0, 60.0), 3))
                note = "" if rng.random() < 0.3 else rng.choice(notes)
                millis = min((index * 86_400_000) // count + rng.randrange(0, 60_000),
                             86_399_999)
                seconds, ms = divmod(millis, 1000)
                minutes, second = divmod(seconds, 60)
                hour, minute = divmod(minutes, 60)
                measured = f"{stamp_prefix}{hour:02d}:{minute:02d}:{second:02d}.{ms:03d}Z"
                valid = "true" if rng.random() > 0.1 else "false"
                lines.append(f"{iso},{rng.choice(sensors)},{site},{reading},"
                             f"{rng.randrange(0, 5000)},{note},{measured},{valid}\n")
            out.writelines(lines)


def _edit(path: Path, edits: list[tuple[str, str]]) -> None:
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        if text.count(old) != 1:
            raise RuntimeError(f"{path.name}: expected one {old!r} to change")
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def write_registry(root: Path, csv_file: Path, base_url: str) -> Path:
    """A copy of ``examples/`` reading ``csv_file`` and pointed at ``base_url``."""
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("data"))
    (root / "data").mkdir()
    try:
        os.link(csv_file, root / "data" / "measurements.csv")
    except OSError:
        shutil.copyfile(csv_file, root / "data" / "measurements.csv")
    for name, edits in PROFILE_EDITS.items():
        _edit(root / "profiles" / name, edits)
    _edit(root / "bindings" / "mock_measurements.yaml",
          [("authority: http://127.0.0.1:8765", f"authority: {base_url}")])
    return root
