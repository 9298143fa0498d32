"""The ``next:`` commands the CLI prints, built in one place.

A printed next command must open the same state the command that printed it used: it carries
every locator (``--journal``, ``--artifacts``, ``--plans``, ``--environment``) that was not the
default, each word shell-quoted (:func:`shlex.quote`), so it can be copied as it is. It never
carries a secret: the password of a URL (``postgresql://user:***@host/db``, ``?password=***``)
is replaced before anything is printed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal
from urllib.parse import urlsplit, urlunsplit

from dpone.cli._inputs import DEFAULT_ARTIFACTS, DEFAULT_ENVIRONMENT, DEFAULT_JOURNAL, DEFAULT_PLANS

REDACTED: Final = "***"
_SECRET_QUERY = re.compile(r"(^|&)((?:ssl)?password)=[^&]*", re.IGNORECASE)

Locator = Literal["environment", "journal", "artifacts", "plans"]
_OPTIONS: Final[dict[Locator, str]] = {"environment": "--environment", "journal": "--journal",
                                       "artifacts": "--artifacts", "plans": "--plans"}
INSPECT: Final[tuple[Locator, ...]] = ("environment", "journal", "plans")
RESUME: Final[tuple[Locator, ...]] = ("environment", "journal", "artifacts", "plans")
SEALING: Final[tuple[Locator, ...]] = ("artifacts", "plans")


def redact(value: str) -> str:
    """``value`` without a URL password: userinfo and ``password=`` query parameters."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if not parts.scheme or not parts.netloc:
        return value
    netloc, query = parts.netloc, _SECRET_QUERY.sub(rf"\1\2={REDACTED}", parts.query)
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{host}"
    if (netloc, query) == (parts.netloc, parts.query):
        return value
    return urlunsplit(parts._replace(netloc=netloc, query=query))


@dataclass(frozen=True)
class Locators:
    """Where a command found its state, as given on its command line (or the defaults)."""

    environment: str = DEFAULT_ENVIRONMENT
    journal: str = DEFAULT_JOURNAL
    artifacts: str = DEFAULT_ARTIFACTS
    plans: str = str(DEFAULT_PLANS)

    @classmethod
    def given(cls, *, environment: str = DEFAULT_ENVIRONMENT, journal: str = DEFAULT_JOURNAL,
              artifacts: str = DEFAULT_ARTIFACTS, plans: Path | str = DEFAULT_PLANS) -> Locators:
        return cls(environment, journal, artifacts, str(Path(plans)))

    def options(self, accepted: Sequence[Locator]) -> list[str]:
        """The ``--option value`` words of every non-default locator ``accepted`` names."""
        default = Locators()
        words: list[str] = []
        for name in accepted:
            if getattr(self, name) != getattr(default, name):
                words += [_OPTIONS[name], getattr(self, name)]
        return words


def command(*words: str) -> str:
    """``dpone WORDS...``: shell-quoted, secrets redacted."""
    return " ".join(shlex.quote(redact(word)) for word in ("dpone", *words))


def inspect_command(operation_id: str, locators: Locators) -> str:
    return command("delivery", "inspect", "--operation-id", operation_id,
                   *locators.options(INSPECT))


def resume_command(operation_id: str, locators: Locators, *, apply: bool = True,
                   wait: bool = False) -> str:
    flags = [*(["--apply"] if apply else []), *(["--wait"] if wait else [])]
    return command("delivery", "resume", "--operation-id", operation_id,
                   *locators.options(RESUME), *flags)


def reconcile_command(operation_id: str, locators: Locators, *proof: str,
                      apply: bool = True) -> str:
    """``dpone delivery reconcile`` of one child with its proof words (``--receipt-id R`` or
    ``--evidence FILE``): what the ``reconcile_delivery_key`` action runs."""
    return command("delivery", "reconcile", "--operation-id", operation_id,
                   *locators.options(RESUME), *proof, *(["--apply"] if apply else []))
