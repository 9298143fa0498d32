"""Structured log events under the ``dpone`` logger: JSON lines for machines, ``key=value`` text
for people, or nothing.

An event is a name (``transition``, ``attempt``, ...) and identifying fields (operation id,
parent id, plan digest, child ordinal, transition, states); the current trace and span ids are
added when a span is recording. Fields are identifiers and states only: never a body, a header
or a credential. :func:`configure` picks the format: ``--log-format``, else ``DPONE_LOG_FORMAT``,
else ``off`` (the CLI's own progress lines and summaries are for people at a terminal).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import sys
from typing import Final, Literal, TextIO, cast, get_args

from dpone.contracts import DponeError
from dpone.observability.tracing import current_ids

LogFormat = Literal["json", "text", "off"]
LOG_FORMATS: Final[tuple[str, ...]] = get_args(LogFormat)
ENVIRONMENT_VARIABLE: Final = "DPONE_LOG_FORMAT"
ROOT: Final = logging.getLogger("dpone")
_FIELDS: Final = "dpone_fields"


def event(logger: logging.Logger, name: str, **fields: object) -> None:
    """Log event ``name`` with ``fields`` at INFO (nothing is built when INFO is off)."""
    if logger.isEnabledFor(logging.INFO):
        logger.info(name, extra={_FIELDS: {k: v for k, v in fields.items() if v is not None}})


def _record_fields(record: logging.LogRecord) -> dict[str, object]:
    fields: dict[str, object] = dict(getattr(record, _FIELDS, {}))
    ids = current_ids()
    if ids is not None:
        fields["trace_id"], fields["span_id"] = ids
    return fields


def _timestamp(record: logging.LogRecord) -> str:
    moment = dt.datetime.fromtimestamp(record.created, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ``ts``, ``level``, ``logger``, ``event``, then the fields."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, object] = {"ts": _timestamp(record), "level": record.levelname.lower(),
                                       "logger": record.name, "event": record.getMessage()}
        document.update(_record_fields(record))
        if record.exc_info and record.exc_info[0] is not None:
            document["error_type"] = record.exc_info[0].__name__
        return json.dumps(document, separators=(",", ":"), default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``ts level event key=value ...`` for people."""

    def format(self, record: logging.LogRecord) -> str:
        pairs = " ".join(f"{key}={value}" for key, value in _record_fields(record).items())
        line = f"{_timestamp(record)} {record.levelname.lower():<7} {record.getMessage()}"
        return f"{line} {pairs}" if pairs else line


def resolve(option: str | None) -> LogFormat:
    """The log format of ``--log-format`` (``option``), else of ``DPONE_LOG_FORMAT``, else off."""
    chosen = option or os.environ.get(ENVIRONMENT_VARIABLE) or "off"
    if chosen not in LOG_FORMATS:
        source = "--log-format" if option else ENVIRONMENT_VARIABLE
        raise DponeError(code="input.invalid_argument", message=f"{source}={chosen!r} is not a log format",
                         hint=f"use one of {', '.join(LOG_FORMATS)}")
    return cast(LogFormat, chosen)


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler :func:`configure` installs (others on the ``dpone`` logger are left alone)."""


_SAVED: dict[str, int | bool] = {}
"""The ``dpone`` logger's level and propagation before :func:`configure` turned events on."""


def configure(option: str | None = None, *, stream: TextIO | None = None) -> LogFormat:
    """Send ``dpone`` log events at INFO and above to ``stream`` (stderr) in the resolved format,
    or, ``off``, no events of ours (the CLI's own output only). Replaces an earlier
    configuration; handlers someone else added to the ``dpone`` logger are kept, and ``off``
    puts back the level and propagation it found."""
    chosen = resolve(option)
    for handler in [h for h in ROOT.handlers if isinstance(h, _Handler)]:
        ROOT.removeHandler(handler)
    if chosen == "off":
        if _SAVED:
            ROOT.setLevel(int(_SAVED.pop("level")))
            ROOT.propagate = bool(_SAVED.pop("propagate"))
        return chosen
    handler = _Handler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    if not _SAVED:
        _SAVED.update(level=ROOT.level, propagate=ROOT.propagate)
    ROOT.addHandler(handler)
    ROOT.propagate = False
    ROOT.setLevel(logging.INFO)
    return chosen
