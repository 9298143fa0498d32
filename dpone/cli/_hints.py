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
from typing import Final, Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

from dpone.cli._inputs import DEFAULT_ARTIFACTS, DEFAULT_ENVIRONMENT, DEFAULT_JOURNAL, DEFAULT_PLANS
from dpone.contracts.plan import RestDeliveryPlan

REDACTED: Final = "***"
RECONCILE_ACTION: Final = "reconcile_delivery_key"
"""The allowed action a ``dpone delivery reconcile`` command carries out."""
JOB_ID: Final = "JOB_ID"
EVIDENCE_FILE: Final = "FILE"
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


@dataclass(frozen=True)
class ProofWays:
    """How a child of one plan can be reconciled: by the profile's certified query by key (no
    proof flag), by a receipt the operator finds (asynchronous jobs), or by attested evidence
    (always). Without the plan (not in the plan store) both flags are offered."""

    key_query: bool = False
    receipt: bool = True

    @classmethod
    def of(cls, plan: RestDeliveryPlan | None) -> ProofWays:
        if plan is None:
            return cls()
        profile = plan.profile.snapshot
        return cls(key_query=profile.acknowledgement.query_by_key is not None,
                   receipt=profile.protocol_family == "async_bulk_job")


def reconcile_choices(operation_id: str, locators: Locators, ways: ProofWays) -> tuple[str, ...]:
    """The ``reconcile`` commands of one child: the one to run as printed (a certified query
    by key), else one per proof with a placeholder (``JOB_ID``, ``FILE``) to fill in."""
    if ways.key_query:
        return (reconcile_command(operation_id, locators),)
    return (*([reconcile_command(operation_id, locators, "--receipt-id", JOB_ID)]
              if ways.receipt else []),
            reconcile_command(operation_id, locators, "--evidence", EVIDENCE_FILE))


def reconcile_text(operation_id: str, label: str, locators: Locators,
                   ways: ProofWays) -> list[str]:
    """Text lines naming the ``reconcile`` command(s) of one child (``label``: ``child 1``):
    the command as printed, or each choice with what to fill in."""
    choices = reconcile_choices(operation_id, locators, ways)
    if ways.key_query:
        return [f"reconcile {label}: {choices[0]}"]
    notes = {JOB_ID: "JOB_ID: the job found in the receiver's console under the child's key",
             EVIDENCE_FILE: "FILE: a dpone.operator_evidence.v1 document you attest"}
    lines = [f"reconcile {label} with{' one of' if len(choices) > 1 else ''}:"]
    for choice in choices:
        placeholder = JOB_ID if f"--receipt-id {JOB_ID}" in choice else EVIDENCE_FILE
        lines += [f"  {choice}", f"    ({notes[placeholder]})"]
    return lines


class _Actionable(Protocol):
    @property
    def operation_id(self) -> str: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def allowed_actions(self) -> tuple[str, ...]: ...


def reconcile_lines(children: Sequence[_Actionable], locators: Locators,
                    ways: ProofWays) -> list[str]:
    """The ``reconcile`` command lines of every child whose allowed actions include it."""
    return [line for child in children if RECONCILE_ACTION in child.allowed_actions
            for line in reconcile_text(child.operation_id, f"child {child.ordinal}", locators,
                                       ways)]
