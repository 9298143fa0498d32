"""The ``next:`` commands the CLI prints, built in one place.

A printed next command must open the same state the command that printed it used: it carries
every locator (``--journal``, ``--artifacts``, ``--plans``, ``--environment``) that was not the
default, each word shell-quoted (:func:`shlex.quote`), so it can be copied as it is; when an
environment file (``--environment NAME``) supplied a locator, it carries ``--environment NAME``
instead of that locator. It never
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

Locator = Literal["environment", "registry", "journal", "artifacts", "plans"]
_OPTIONS: Final[dict[Locator, str]] = {"environment": "--environment", "registry": "--registry",
                                       "journal": "--journal", "artifacts": "--artifacts",
                                       "plans": "--plans"}
INSPECT: Final[tuple[Locator, ...]] = ("environment", "registry", "journal", "artifacts", "plans")
RESUME: Final[tuple[Locator, ...]] = ("environment", "registry", "journal", "artifacts", "plans")
LIST: Final[tuple[Locator, ...]] = ("environment", "registry", "journal")
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
    """Where a command found its state, as given on its command line (or the defaults).

    With an environment file (``environment_file``), ``--environment NAME`` is always carried
    and every locator the file ``supplied`` is left out: the printed command resolves it from
    the same file. ``registry`` is the explicit ``--registry`` the file was found through.
    """

    environment: str = DEFAULT_ENVIRONMENT
    journal: str = DEFAULT_JOURNAL
    artifacts: str = DEFAULT_ARTIFACTS
    plans: str = str(DEFAULT_PLANS)
    registry: str | None = None
    supplied: frozenset[Locator] = frozenset()
    environment_file: bool = False

    @classmethod
    def given(cls, *, environment: str = DEFAULT_ENVIRONMENT, journal: str = DEFAULT_JOURNAL,
              artifacts: str = DEFAULT_ARTIFACTS, plans: Path | str = DEFAULT_PLANS) -> Locators:
        return cls(environment, journal, artifacts, str(Path(plans)))

    def options(self, accepted: Sequence[Locator]) -> list[str]:
        """The ``--option value`` words of every locator ``accepted`` names that is neither a
        default nor supplied by the environment file."""
        default = Locators()
        words: list[str] = []
        for name in accepted:
            value = getattr(self, name)
            if name in self.supplied or value is None:
                continue
            if value != getattr(default, name) or (name == "environment"
                                                    and self.environment_file):
                words += [_OPTIONS[name], value]
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
