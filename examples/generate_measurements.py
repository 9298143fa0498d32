"""Generate the sample "measurements" dataset deterministically.

Writes ``examples/data/measurements.csv``: business_date 2026-08-01 through 2026-08-31 with a
variable number of rows per day, nulls, empty strings, Cyrillic text and UTC timestamps.

CSV dialect: UTF-8, comma, ``"`` quoting, ``\\n`` line ends, a header row. A *null* is an empty
unquoted field; an *empty string* is ``""``. Every non-null string is quoted, so the two stay
distinct for any reader that honours quoting (pyarrow: ``quoted_strings_can_be_null=False``).

Run: ``python examples/generate_measurements.py`` (same bytes on every machine).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from pathlib import Path

SEED = 20260801
FIRST_DAY = dt.date(2026, 8, 1)
DAYS = 31
SITES = ["Москва-Север", "Санкт-Петербург", "Новосибирск", "Kazan", "Екатеринбург", "Sochi"]
NOTES = ["", "калибровка", "ok", "проверено вручную", "sensor reset", "замена батареи"]
HEADER = ["business_date", "sensor_id", "site", "reading", "sample_count", "note",
          "measured_at", "is_valid"]
OUT = Path(__file__).resolve().parent / "data" / "measurements.csv"


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def rows() -> list[list[str]]:
    rng = random.Random(SEED)
    out: list[list[str]] = []
    for offset in range(DAYS):
        day = FIRST_DAY + dt.timedelta(days=offset)
        # Variable volume: quiet weekends, a busy mid-month spike, and one very light day.
        count = 40 if day.weekday() >= 5 else 110
        if 14 <= day.day <= 16:
            count = 240
        if day.day == 23:
            count = 3
        for index in range(count):
            sensor = f"S-{rng.randrange(1, 60):03d}"
            site = "" if rng.random() < 0.05 else rng.choice(SITES)
            site_field = "" if rng.random() < 0.05 else _quote(site)
            reading = "" if rng.random() < 0.04 else repr(round(rng.uniform(-40.0, 60.0), 3))
            samples = str(rng.randrange(0, 5000))
            note = rng.choice(NOTES)
            note_field = "" if rng.random() < 0.3 else _quote(note)
            seconds = (index * 86_400) // count + rng.randrange(0, 60)
            stamp = dt.datetime.combine(day, dt.time(), dt.UTC) + dt.timedelta(
                seconds=seconds, milliseconds=rng.randrange(0, 1000))
            measured_at = stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"
            valid = "true" if rng.random() > 0.1 else "false"
            out.append([day.isoformat(), _quote(sensor), site_field, reading, samples,
                        note_field, measured_at, valid])
    return out


def render() -> bytes:
    lines = [",".join(HEADER)] + [",".join(row) for row in rows()]
    return ("\n".join(lines) + "\n").encode("utf-8")


def main() -> None:
    data = render()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(data)
    lines = data.count(b"\n") - 1
    print(f"wrote {OUT.name}: {lines} rows, {len(data)} bytes, "
          f"sha256:{hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
