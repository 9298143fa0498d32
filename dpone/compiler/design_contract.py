"""Validate ``dpone.rest-bulk-delivery-design.v1`` and compile it for the runtime guard.

The contract's bytes go through the bounded YAML loader (invalid UTF-8, duplicate keys and other
load errors are ``DponeError`` with exit 2), then the Draft 2020-12 JSON Schema, then the named
semantic checks of ``_design_checks`` and the exact-set error-catalog check. The result is a
``dpone.design-contract-report.v1`` document; every finding names its check, YAML path and line.

Only a contract that passes every check is compiled (``render_compiled_contract``) into the JSON
form the runtime loads with the standard library (``dpone.contracts.design``).
"""

from __future__ import annotations

import functools
import io
import json
import re
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from dpone.compiler._design_checks import MODEL_CHECKS, Finding
from dpone.compiler._design_model import Model
from dpone.compiler._yaml import LoadedDocument, YamlPath, load_yaml_bytes, render_path
from dpone.contracts import (
    ERROR_CATALOG,
    REST_DELIVERY_ERRORS,
    DponeError,
    Location,
    content_digest,
)
from dpone.contracts._state_reference import render_reference
from dpone.contracts.design import COMPILED_RESOURCE, CONTRACT_RESOURCE
from dpone.contracts.state import StateContract

REPORT_SCHEMA_ID = "dpone.design-contract-report.v1"
SCHEMA_RESOURCE = "rest-bulk-delivery-design.v1.schema.json"
SHIPPED_CONTRACT_NAME = f"dpone/contracts/design/{CONTRACT_RESOURCE}"
COMPILED_CONTRACT_PATH = Path(__file__).resolve().parent.parent / "contracts" / "design" / (
    COMPILED_RESOURCE)
"""Where ``scripts/generate_design_contract.py`` writes the compiled contract (review the diff)."""
SPEC_ERROR_CODES: frozenset[str] = frozenset(spec.code for spec in REST_DELIVERY_ERRORS)
"""Spec "CLI and recovery": the stable REST_DELIVERY_* codes, as the runtime catalog holds them
(generated from the shipped contract). A contract file under check must list exactly these."""
_CODE_RE = re.compile(r"\bREST_DELIVERY_[A-Z][A-Z_]*\b")
_METADATA = ("exit_class", "retryability", "operator_action", "severity", "evidence")

Status = Literal["PASS", "FAIL", "SKIPPED"]
_CATALOG = ("error_catalog", "error catalog is the exact stable set with runtime metadata")
_RUNTIME = ("runtime_contract", "the runtime guard builds from the contract")


def _design_dir() -> Traversable:
    return files("dpone.contracts").joinpath("design")


def shipped_contract_bytes() -> bytes:
    return _design_dir().joinpath(CONTRACT_RESOURCE).read_bytes()



@functools.cache
def contract_json_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(_design_dir().joinpath(SCHEMA_RESOURCE).read_text("utf-8"))
    return schema


@dataclass(frozen=True)
class ReportFinding:
    check: str
    message: str
    path: str
    line: int | None

    def to_document(self) -> dict[str, Any]:
        return {"check": self.check, "message": self.message, "path": self.path,
                "line": self.line}


@dataclass(frozen=True)
class CheckOutcome:
    id: str
    title: str
    status: Status
    findings: tuple[ReportFinding, ...] = ()

    def to_document(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status,
                "findings": [f.to_document() for f in self.findings]}


@dataclass(frozen=True)
class DesignReport:
    """The outcome of every check on one contract file."""

    file: str
    digest: str
    checks: tuple[CheckOutcome, ...]
    data: dict[str, Any] = field(repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return all(check.status == "PASS" for check in self.checks)

    @property
    def error(self) -> DponeError | None:
        """``contract.schema_invalid`` / ``contract.semantic_invalid``, or None when all pass."""
        failed = [c for c in self.checks if c.status == "FAIL"]
        if not failed:
            return None
        code = "contract.schema_invalid" if failed[0].id == "schema" else "contract.semantic_invalid"
        first = failed[0].findings[0] if failed[0].findings else None
        total = sum(len(c.findings) for c in failed)
        return DponeError(
            code=code,
            message=f"{len(failed)} check(s) failed with {total} finding(s): "
            + ", ".join(c.id for c in failed),
            location=Location(file=self.file, line=first.line, path=first.path) if first else None,
            details={"failed_checks": [c.id for c in failed]},
        )

    def to_document(self) -> dict[str, Any]:
        error = self.error
        counts = {status: sum(c.status == status for c in self.checks)
                  for status in ("PASS", "FAIL", "SKIPPED")}
        return {
            "schema": REPORT_SCHEMA_ID,
            "contract": {"file": self.file, "digest": self.digest,
                         "schema_id": self.data.get("schema")},
            "status": "PASS" if self.passed else "FAIL",
            "summary": {"passed": counts["PASS"], "failed": counts["FAIL"],
                        "skipped": counts["SKIPPED"]},
            "checks": [c.to_document() for c in self.checks],
            "error": error.to_document() if error else None,
        }


def _outcome(doc: LoadedDocument, check_id: str, title: str,
             findings: Iterable[Finding]) -> CheckOutcome:
    rendered = tuple(
        ReportFinding(check=check_id, message=message, path=render_path(path),
                      line=doc.locate(path).line)
        for message, path in findings
    )
    return CheckOutcome(check_id, title, "FAIL" if rendered else "PASS", rendered)


def _schema_findings(data: dict[str, Any]) -> Iterator[Finding]:
    validator = Draft202012Validator(contract_json_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    for error in errors:
        path: YamlPath = tuple(error.absolute_path)
        extra = _unexpected_keys(error)
        if extra:
            for key in extra:
                yield f"unknown field {key!r} (additionalProperties: false)", (*path, key)
        else:
            yield error.message, path


def _unexpected_keys(error: ValidationError) -> list[str]:
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    known = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    return sorted(key for key in error.instance if key not in known)


def package_error_codes(root: Traversable | None = None) -> dict[str, str]:
    """Every ``REST_DELIVERY_*`` code the installed package references, with one file for each.

    .yaml files count wholly; in .py files only string literals and comments count, so Python
    identifiers (and ``__all__`` entries, which name identifiers) are not code references.
    """
    found: dict[str, str] = {}
    for rel, entry in _walk(root or files("dpone"), "dpone"):
        text = entry.read_bytes().decode("utf-8", errors="replace")
        chunks = [text] if rel.endswith(".yaml") else _python_literals(text)
        for chunk in chunks:
            for code in _CODE_RE.findall(chunk):
                found.setdefault(code, rel)
    return found


@functools.cache
def _installed_package_codes() -> dict[str, str]:
    """The installed package does not change while a process runs: scan it once."""
    return package_error_codes()


def _walk(node: Traversable, rel: str) -> Iterator[tuple[str, Traversable]]:
    for entry in sorted(node.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            if entry.name not in {"__pycache__", "fixtures"}:
                yield from _walk(entry, f"{rel}/{entry.name}")
        elif entry.name.endswith((".py", ".yaml")):
            yield f"{rel}/{entry.name}", entry


def _python_literals(text: str) -> list[str]:
    out: list[str] = []
    in_all = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME and token.string == "__all__":
                in_all = True
            elif token.type == tokenize.NEWLINE:
                in_all = False
            elif token.type == tokenize.COMMENT or (token.type == tokenize.STRING and not in_all):
                out.append(token.string)
    except (tokenize.TokenError, SyntaxError):
        return [text]
    return out


def _catalog_findings(data: dict[str, Any], scan_package: bool,
                      against_runtime: bool) -> Iterator[Finding]:
    """The catalog's own consistency; ``against_runtime`` also compares it with the runtime
    catalog (off only while the runtime catalog is being generated from this contract)."""
    entries = {e["code"]: (i, e) for i, e in enumerate(data["error_catalog"])}
    if len(entries) != len(data["error_catalog"]):
        yield "a code is listed twice in error_catalog", ("error_catalog",)
    if against_runtime:
        for code in sorted(SPEC_ERROR_CODES - set(entries)):
            yield f"stable error code {code} of the specification is missing", ("error_catalog",)
        for code in sorted(set(entries) - SPEC_ERROR_CODES):
            yield (f"{code} is not a stable error code of the specification",
                   ("error_catalog", entries[code][0], "code"))
    stable = data["stable_error_codes"]
    if set(stable) != set(entries):
        yield (f"stable_error_codes differs from error_catalog: "
               f"{sorted(set(stable) ^ set(entries))}", ("stable_error_codes",))
    for code, (i, entry) in sorted(entries.items()):
        spec = ERROR_CATALOG.get(code) if against_runtime else None
        for key in _METADATA:
            if key not in entry or str(entry[key]).strip() == "":
                yield f"{code}: metadata field {key!r} is missing", ("error_catalog", i)
            elif spec is not None and entry[key] != _runtime_value(spec, key):
                yield (f"{code}: {key} is {entry[key]!r}; the runtime catalog says "
                       f"{_runtime_value(spec, key)!r}", ("error_catalog", i, key))
        if spec is None and against_runtime:
            yield f"{code} is not in the runtime error catalog", ("error_catalog", i, "code")
    for path, code in _contract_code_refs(data):
        if code not in entries:
            yield f"{code} is referenced but has no error_catalog entry", path
    if scan_package:
        for code, where in sorted(_installed_package_codes().items()):
            if code not in entries:
                yield (f"{code} is referenced in {where} but has no error_catalog entry",
                       ("error_catalog",))


def _runtime_value(spec: Any, key: str) -> Any:
    value = getattr(spec, key)
    return int(value) if key == "exit_class" else str(value)


def _contract_code_refs(data: dict[str, Any]) -> Iterator[tuple[YamlPath, str]]:
    for key in ("automatic_transitions", "operator_transitions", "failure_mapping"):
        for i, obj in enumerate(data[key]):
            for field_name in ("error_codes", "refusal_codes"):
                for j, code in enumerate(obj.get(field_name, [])):
                    yield (key, i, field_name, j), code


def _runtime_findings(data: dict[str, Any]) -> Iterator[Finding]:
    try:
        StateContract.from_document(data)
    except DponeError as exc:
        yield exc.message, ()


def check_contract(raw: bytes, file: str, *, scan_package: bool = True,
                   against_runtime: bool = True) -> DesignReport:
    """Load and check one contract; raises ``DponeError`` only when it cannot be loaded.

    ``against_runtime=False`` skips the comparisons with the runtime (its error catalog and the
    typed names the guard parses with), which is generated from the shipped contract
    (``dpone.compiler.design_names``).
    """
    doc = load_yaml_bytes(raw, file)
    schema = _outcome(doc, "schema", "Draft 2020-12 JSON Schema", _schema_findings(doc.data))
    if schema.status == "FAIL":  # a schema-invalid mapping is not checked further
        titles = [(cid, title) for cid, title, _ in MODEL_CHECKS] + [_CATALOG, _RUNTIME]
        checks = [schema] + [CheckOutcome(cid, title, "SKIPPED") for cid, title in titles]
    else:
        model = Model(doc.data)
        checks = [schema,
                  *(_outcome(doc, cid, title, run(model)) for cid, title, run in MODEL_CHECKS),
                  _outcome(doc, *_CATALOG,
                           _catalog_findings(doc.data, scan_package, against_runtime)),
                  _outcome(doc, *_RUNTIME, _runtime_findings(doc.data)) if against_runtime
                  else CheckOutcome(*_RUNTIME, "SKIPPED")]
    return DesignReport(file=file, digest=content_digest(raw), checks=tuple(checks),
                        data=doc.data)


def check_contract_file(path: Path) -> DesignReport:
    """Check the contract at ``path``; a missing file is ``input.not_found`` (exit 2)."""
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise DponeError(code="input.not_found", message=f"no such contract file: {path}",
                         location=Location(file=str(path))) from None
    return check_contract(raw, str(path))


def check_shipped_contract() -> DesignReport:
    return check_contract(shipped_contract_bytes(), SHIPPED_CONTRACT_NAME)


@functools.cache
def validated_shipped_document() -> dict[str, Any]:
    """The shipped YAML contract's document once every check passed (once per process).

    It is the source of every generated form (the compiled JSON, the typed names, the runtime
    error catalog), so it is not compared with the runtime catalog generated from it.
    """
    report = check_contract(shipped_contract_bytes(), SHIPPED_CONTRACT_NAME, scan_package=False,
                            against_runtime=False)
    error = report.error
    if error is not None:
        raise error
    return report.data


def render_compiled_contract() -> str:
    """The compiled form of the shipped contract: its validated document as JSON, in the YAML's
    order (``dpone.contracts.design.COMPILED_RESOURCE``, loaded by the runtime)."""
    return json.dumps(validated_shipped_document(), indent=2, ensure_ascii=False) + "\n"


def write_compiled_contract(path: Path = COMPILED_CONTRACT_PATH) -> Path:
    path.write_text(render_compiled_contract(), encoding="utf-8")
    return path


def render_text(report: DesignReport) -> str:
    """One line per check, its findings indented beneath it."""
    lines = [f"{report.file} ({report.digest})"]
    for check in report.checks:
        lines.append(f"{check.status:<7} {check.id}: {check.title}")
        lines += [f"        {report.file}:{f.line} ({f.path}): {f.message}"
                  for f in check.findings]
    passed = sum(c.status == "PASS" for c in report.checks)
    lines.append(f"{'PASS' if report.passed else 'FAIL'}: {passed}/{len(report.checks)} checks "
                 "passed")
    return "\n".join(lines)


def render_state_machine_reference() -> str:
    """The Markdown reference page of the shipped contract."""
    return render_reference(StateContract.from_document(validated_shipped_document()),
                            contract_digest=content_digest(shipped_contract_bytes()))


__all__ = [
    "COMPILED_CONTRACT_PATH",
    "REPORT_SCHEMA_ID",
    "SHIPPED_CONTRACT_NAME",
    "SPEC_ERROR_CODES",
    "CheckOutcome",
    "DesignReport",
    "ReportFinding",
    "check_contract",
    "check_contract_file",
    "check_shipped_contract",
    "contract_json_schema",
    "package_error_codes",
    "render_compiled_contract",
    "render_state_machine_reference",
    "render_text",
    "shipped_contract_bytes",
    "validated_shipped_document",
    "write_compiled_contract",
]
