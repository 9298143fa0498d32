"""Authoring-format changes that made authors edit their files, and the refusal of an older file.

Each :class:`FormatChange` of :data:`CHANGES` names an authoring format, the mapping (``block``)
whose fields changed, the fields whose absence marks a file written before the change, and the
migration note (``docs/migrations/<note>``) that says what to edit, before and after. A file is
checked against the table before the checks of the same fields run (when it is loaded, before it
is validated; or, for a change that shows only in a compilation, where the compiler resolves the
binding against its environment), so a file in an older format is refused as
``authoring.migration_required`` naming the change and its note, never as a bare "missing field"
or a later refusal that does not say why.

The ``schema:`` line is checked first: a file without one, or with an older version of its
format (``dpone.environment.v0`` where this release reads ``dpone.environment.v1``), is refused
the same way, pointing at the index of the notes. A newer or foreign schema id is left to the
schema check (``schema.invalid_value``).

Only a file that states *none* of a change's fields predates it; a file that states some of them
was written for the current format, and its mistake is reported by the check that owns the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from pydantic import BaseModel

from dpone.compiler._yaml import LoadedDocument, YamlPath
from dpone.contracts import DponeError
from dpone.contracts.binding import BINDING_SCHEMA_ID, ENVIRONMENT_SCHEMA_ID
from dpone.contracts.mapping import MAPPING_SCHEMA_ID
from dpone.contracts.profile import PROFILE_SCHEMA_ID
from dpone.contracts.workload import WORKLOAD_SCHEMA_ID

MIGRATIONS_DIR: Final = "docs/migrations"
INDEX: Final = f"{MIGRATIONS_DIR}/README.md"
CHANGELOG: Final = "CHANGELOG.md"

AUTHORING_FORMATS: Final = (WORKLOAD_SCHEMA_ID, MAPPING_SCHEMA_ID, PROFILE_SCHEMA_ID,
                            BINDING_SCHEMA_ID, ENVIRONMENT_SCHEMA_ID)
"""The formats people write (the others are documents dpone writes)."""

Stage = Literal["load", "compile", "admission"]

_FORMAT_ID = re.compile(r"^(dpone\.[a-z_]+)\.v([0-9]{1,6})$")


@dataclass(frozen=True, slots=True)
class FormatChange:
    """One change of an authoring format that requires authors to edit existing files."""

    schema: str
    """The authoring format (schema id) the change is about."""
    note: str
    """The migration note's file name under ``docs/migrations/``."""
    date: str
    """The day the change landed (ISO date)."""
    commits: tuple[str, ...]
    """The commits that made it."""
    changed: str
    """What changed, as the refusal says it."""
    fix: str
    """What to edit, the first words of the refusal's hint."""
    absent: tuple[str, ...]
    """The fields of ``block`` that an older file does not state (all of them)."""
    block: YamlPath = ()
    """The mapping the fields sit in; ``()`` is the file's top level. A file without the block
    predates nothing here."""
    when: tuple[tuple[str, str | None], ...] = ()
    """Fields of ``block`` that must hold for the change to apply: a value, or ``None`` for
    "present and not empty"."""
    touches: tuple[str, ...] = ()
    """Other formats whose files the note tells authors to edit; their refusals are those of the
    checks that own the fields (the note explains them)."""
    stage: Stage = "load"
    """``load``: the file alone shows it, checked before the file is validated. ``compile``: it
    shows only when a plan is compiled (a binding names what the change added; an environment
    read on its own for its control plane needs none of it), checked where the compiler resolves
    the binding against the environment. ``admission``: the file stays valid and compiles; only
    the admission of a new delivery refuses it, with its own code (``runtime.feature_disabled``
    names the note)."""

    @property
    def path(self) -> str:
        """The note, relative to the repository root."""
        return f"{MIGRATIONS_DIR}/{self.note}"

    def applies(self, data: dict[str, Any]) -> bool:
        """True when ``data`` (a file of this change's format) is in the format before it."""
        block = _at(data, self.block)
        if not isinstance(block, dict):
            return False
        for name, value in self.when:
            held = block.get(name)
            if (not held) if value is None else held != value:
                return False
        return not any(name in block for name in self.absent)


CHANGES: Final[tuple[FormatChange, ...]] = (
    FormatChange(
        schema=PROFILE_SCHEMA_ID, note="idempotency-fence-location.md",
        date="2026-12-01", commits=("7092a1d", "d1379e0"),
        changed="an idempotency_key_header fence states where its key travels (location: header, "
                "value_from: receiver_mutation_key), and this fence states neither",
        fix="Add `location: header` and `value_from: receiver_mutation_key` under "
            "mutation_fence (the request header must render {receiver_mutation_key})",
        block=("mutation_fence",), absent=("location", "value_from"),
        when=(("type", "idempotency_key_header"),)),
    FormatChange(
        schema=ENVIRONMENT_SCHEMA_ID, note="environment-tls-network-policies.md",
        date="2026-12-01", commits=("07adeea",),
        changed="an environment defines the TLS and network policies its bindings name "
                "(tls_policy_ref, network_policy_ref), and this file has neither tls_policies "
                "nor network_policies",
        fix="Define the policies the environment's bindings name under tls_policies and "
            "network_policies",
        absent=("tls_policies", "network_policies"), stage="compile"),
    FormatChange(
        schema=PROFILE_SCHEMA_ID, note="enforced-policy-values.md",
        date="2026-12-01", commits=("de521bb",),
        changed="a mutation fence certified in an environment binds the key to the payload "
                "(key_payload_binding: required), and this fence does not say it does",
        fix="Add `key_payload_binding: required` under mutation_fence (or remove "
            "certified_environments if the receiver does not compare the payload under a key)",
        block=("mutation_fence",), absent=("key_payload_binding",),
        when=(("certified_environments", None),), touches=(BINDING_SCHEMA_ID,)),
    FormatChange(
        schema=ENVIRONMENT_SCHEMA_ID, note="runtime-kill-switch.md",
        date="2026-12-04", commits=("fbf7f51",),
        changed="an environment turns new deliveries on with its kill switch "
                "(runtime.features.rest_bulk_delivery_v1, off unless the file turns it on), "
                "and this file states no runtime block",
        fix="Add `runtime: {features: {rest_bulk_delivery_v1: true}}` to the environment "
            "where new deliveries may be admitted",
        absent=("runtime",), stage="admission"),
)
"""Every authoring change that requires authors to edit files, oldest first."""


def _at(data: Any, path: YamlPath) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def format_of(model: type[BaseModel]) -> str | None:
    """The authoring format a model reads (its ``schema`` literal), or None."""
    field = model.model_fields.get("schema_id")
    values = get_args(field.annotation) if field is not None else ()
    return str(values[0]) if len(values) == 1 and str(values[0]) in AUTHORING_FORMATS else None


def format_version(schema_id: str) -> int:
    """``3`` for ``dpone.batch.v3``."""
    matched = _FORMAT_ID.match(schema_id)
    if matched is None:
        raise ValueError(f"{schema_id!r} is not a versioned format id")
    return int(matched.group(2))


def notes_of(schema_id: str) -> tuple[str, ...]:
    """The migration notes of one authoring format, oldest first."""
    return tuple(change.path for change in CHANGES
                 if schema_id == change.schema or schema_id in change.touches)


def schema_annotations(schema_id: str) -> dict[str, Any]:
    """What the generated JSON Schema of an authoring format says about its version and changes:
    the format version, the changelog, the index of migration notes and this format's notes."""
    return {
        "$comment": f"Authoring format {schema_id} (format version {format_version(schema_id)}). "
                    f"Changes: {CHANGELOG}; changes that require authors to edit files, each with "
                    f"its migration note: {INDEX}.",
        "x-dpone-format-version": format_version(schema_id),
        "x-dpone-changelog": CHANGELOG,
        "x-dpone-migrations": INDEX,
        "x-dpone-migration-notes": list(notes_of(schema_id)),
    }


def _refusal(doc: LoadedDocument, path: YamlPath, message: str, hint: str,
             **details: Any) -> DponeError:
    # An absent field is located at the nearest mapping that holds it, and named by its own path.
    return DponeError(code="authoring.migration_required", message=message,
                      location=doc.locate(path), hint=hint, details=details)


def _older_schema(doc: LoadedDocument, schema_id: str) -> DponeError | None:
    if "schema" not in doc.data:
        return _refusal(doc, ("schema",), f"the file states no format version (schema:); this "
                        f"release reads {schema_id}",
                        f"Add `schema: {schema_id}` as the file's first key, then apply the notes of "
                        f"{INDEX} that the file predates.", format=schema_id, note=INDEX)
    stated = doc.data["schema"]
    matched = _FORMAT_ID.match(stated) if isinstance(stated, str) else None
    expected = _FORMAT_ID.match(schema_id)
    if matched is None or expected is None or matched.group(1) != expected.group(1):
        return None
    if int(matched.group(2)) >= int(expected.group(2)):
        return None
    return _refusal(doc, ("schema",), f"{stated} is an older version of this format; this "
                    f"release reads {schema_id}",
                    f"Edit the file as the notes of {INDEX} describe, then set "
                    f"`schema: {schema_id}`.", format=schema_id, note=INDEX)


def refuse_older_format(doc: LoadedDocument, schema_id: str, stage: Stage = "load") -> None:
    """Raise ``authoring.migration_required`` when ``doc`` is in an older ``schema_id`` format.

    ``load`` checks the ``schema:`` line and the changes the file alone shows; ``compile`` the
    changes that show when a plan is compiled with it (:attr:`FormatChange.stage`). The first
    change the file predates is the error; any other rides along in ``details["more"]``."""
    older = _older_schema(doc, schema_id) if stage == "load" else None
    if older is not None:
        raise older
    found = [_refusal(doc, (*change.block, change.absent[0]),
                      f"the file predates a change of {schema_id} ({change.date}): "
                      f"{change.changed}",
                      f"{change.fix}; {change.path} shows the change, before and after.",
                      format=schema_id, note=change.path, changed_on=change.date,
                      commits=list(change.commits))
             for change in CHANGES
             if change.schema == schema_id and change.stage == stage and change.applies(doc.data)]
    if found:
        first = found[0]
        if found[1:]:
            first.details["more"] = [str(other) for other in found[1:]]
        raise first
