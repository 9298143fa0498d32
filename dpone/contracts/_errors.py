"""The closed error catalog and the one exception type that carries a catalog code.

Every failure a user can see has a stable code with an exit class, a retryability axis, the
operator action, a severity and the evidence it leaves. The ``REST_DELIVERY_*`` codes are the
specification's runtime catalog, generated from the design contract's ``error_catalog``
(``_catalog.py``); the dotted lower-case codes are compile, load and runtime errors kept here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpone.contracts.documents import ErrorDocument

from dpone.contracts._catalog import STABLE_ERROR_ROWS


class ExitClass(IntEnum):
    """CLI exit codes (spec "CLI and recovery")."""

    OK = 0
    INVALID = 2
    UNAVAILABLE = 3
    EFFECT_UNCERTAIN = 4
    TERMINAL_FAILURE = 5


class Retryability(StrEnum):
    NEVER = "never"
    RECONCILIATION_ONLY = "reconciliation_only"
    COMPENSATION_OR_RECONCILIATION_ONLY = "compensation_or_reconciliation_only"
    OBSERVATION_OR_RECONCILIATION_ONLY = "observation_or_reconciliation_only"
    BLOCKED = "blocked"
    AFTER_FIX = "after_fix"
    WHEN_AVAILABLE = "when_available"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    CRITICAL = "critical"


class EvidenceRetention(StrEnum):
    """What evidence a stop with this code leaves for the operator (``ErrorSpec.evidence``)."""

    NONE = "none"
    OPERATION = "operation"
    RECONCILIATION = "reconciliation"
    EFFECT_TOMBSTONE = "effect_tombstone"


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    code: str
    exit_class: ExitClass
    retryability: Retryability
    operator_action: str
    severity: Severity
    evidence: EvidenceRetention

    @property
    def exit_code(self) -> int:
        """The CLI exit code of this code's exit class."""
        return int(self.exit_class)


_R = Retryability
_S = Severity
_E = EvidenceRetention

REST_DELIVERY_ERRORS: tuple[ErrorSpec, ...] = tuple(
    ErrorSpec(code, ExitClass(exit_class), Retryability(retry), action, Severity(severity),
              EvidenceRetention(evidence))
    for code, exit_class, retry, action, severity, evidence in STABLE_ERROR_ROWS
)
"""The specification's stable codes, as the design contract's ``error_catalog`` lists them."""


def _ce(code: str, action: str, exit_class: int = 2, retry: Retryability | None = None) -> ErrorSpec:
    """A dotted code; its retryability follows the exit class unless ``retry`` says otherwise."""
    default = {2: _R.AFTER_FIX, 3: _R.WHEN_AVAILABLE, 5: _R.NEVER}.get(exit_class,
                                                                    _R.RECONCILIATION_ONLY)
    return ErrorSpec(code, ExitClass(exit_class), retry or default, action, _S.ERROR, _E.NONE)


COMPILE_ERRORS: tuple[ErrorSpec, ...] = (
    _ce("input.not_found", "Check the path; it must name an existing file or directory."),
    _ce("input.invalid_argument", "Check the command's arguments (`--help`)."),
    _ce("yaml.invalid_utf8", "Save the file as UTF-8."),
    _ce("yaml.duplicate_key", "Remove one of the two entries; YAML keys must be unique."),
    _ce("yaml.syntax", "Fix the YAML syntax at the reported line."),
    _ce("yaml.too_large", "Split the document; it exceeds the loader's byte bound."),
    _ce("yaml.too_deep", "Flatten the document; it exceeds the loader's nesting bound."),
    _ce("yaml.alias_forbidden", "Write the value out; anchors and aliases are not accepted."),
    _ce("yaml.custom_tag", "Remove the tag; only plain YAML scalars, lists and mappings load."),
    _ce("yaml.not_a_mapping", "The document must be a YAML mapping at the top level."),
    _ce("yaml.multiple_documents", "Keep exactly one YAML document per file."),
    _ce("schema.unknown_field", "Remove the field or fix its spelling."),
    _ce("schema.missing_field", "Add the required field."),
    _ce("schema.invalid_value", "Use a value of the documented type and range."),
    _ce("authoring.migration_required", "The file is in an older authoring format: edit it as "
        "the migration note the hint names (docs/migrations/) describes, then run `dpone check` "
        "again."),
    _ce("registry.not_found", "Add the file to the registry or fix the reference."),
    _ce("registry.invalid_ref", "Use the documented reference form (e.g. `id@version`)."),
    _ce("registry.id_mismatch", "Make the file name match its `id` and `version`."),
    _ce("profile.unsupported_family", "Use protocol_family sync_batch or async_bulk_job."),
    _ce("profile.excluded_feature", "Remove the feature; it is excluded from V1."),
    _ce("profile.forbidden_header", "Remove the header; credentials and transport headers "
        "are not profile semantics."),
    _ce("profile.invalid_codec", "Use a payload format and compression the body type supports."),
    _ce("profile.fence_header_not_rendered", "Render the fence header from the key: "
        "request.headers.<header_name> must be exactly \"{receiver_mutation_key}\"."),
    _ce("profile.fence_inconsistent", "Make the fence say where the request carries the key: "
        "receiver_duplicate_key is location payload_filename of a multipart_file body, "
        "idempotency_key_header is location header, both value_from receiver_mutation_key; a "
        "none fence names no location, value_from or header_name."),
    _ce("profile.query_by_key_not_read_only", "Use method: GET; a query by key never mutates."),
    _ce("profile.query_by_key_symbol", "Put only {receiver_mutation_key} and/or {delivery_key} "
        "in the query by key path, and at least one of them."),
    _ce("profile.query_by_key_unsent_key", "Look up a key the submit request carries (a "
        "template symbol, or receiver_mutation_key in a multipart payload filename)."),
    _ce("profile.query_by_key_receipt_incomplete", "Extract every field of "
        "acknowledgement.receipt under query_by_key.receipt."),
    _ce("profile.query_by_key_horizon_short", "Certify absence.receipt_ttl_s of at least "
        "timeouts.request_total_s."),
    _ce("profile.query_by_key_answer_not_status", "Keep answer: receipt, or give the profile "
        "the acknowledgement.poll that reads the job status and verification.counters_from: "
        "poll_response."),
    _ce("profile.status_conflict", "Give each submit status one meaning: a status certified as "
        "refused before effect is never also accepted, duplicate or throttle."),
    _ce("binding.secret_value", "Replace the value with a `credential_ref` (env:, file:, vault:)."),
    _ce("binding.insecure_authority", "Use https://, or mark the environment as development "
        "for a loopback receiver."),
    _ce("binding.invalid_authority", "Give only scheme://host[:port], without path, "
        "query, userinfo or fragment."),
    _ce("workload.override_out_of_range", "Choose a value within the profile's bounds."),
    _ce("workload.override_not_allowed", "Remove the override; the profile does not allow it."),
    _ce("workload.mutation_unsupported", "Choose a mutation kind the profile supports."),
    _ce("mapping.layout_changed", "A mapping id names one column layout: give the new layout "
        "a new mapping id (shop.orders.v1 -> shop.orders.v2) and point the workload's "
        "payload.mapping_ref at it; plans compiled with the old id keep their layout."),
    _ce("workload.scope_field_unknown", "Name a date column of the mapping as the scope field."),
    _ce("runtime.feature_disabled", "Turn runtime.features.rest_bulk_delivery_v1 on in the "
        "environment file to admit new deliveries; admitted ones go on with `dpone delivery "
        "resume`."),
    _ce("certification.maturity_too_low", "Use a profile of the maturity the environment "
        "requires, or certify this one and raise its `maturity:`."),
    _ce("certification.missing", "Certify the profile through the binding in this environment "
        "(`dpone profile certify`) and keep the passing artifact under certifications/."),
    _ce("certification.stale", "Certify the profile again: the environment accepts "
        "certifications younger than its certification.max_age_days."),
    _ce("certification.scope_missing", "Give the binding a certification_scope (the sandbox "
        "resource its receiver lets a certification write to, and the levels it allows)."),
    _ce("certification.level_not_allowed", "Certify at a level the binding's "
        "certification_scope.levels allows, or add the level once the receiver's sandbox "
        "allows it."),
    _ce("certification.environment_mismatch", "Certify in the environment the binding belongs "
        "to (its environment_ref), or name a binding of that environment."),
    _ce("template.syntax", "Write literal text and `{symbol}` placeholders only."),
    _ce("template.absolute_url", "Give a relative path; the binding owns scheme and authority."),
    _ce("template.traversal", "Remove `..` and encoded traversal from the path."),
    _ce("template.control_character", "Remove control characters from the template."),
    _ce("template.unknown_symbol", "Use resource, delivery_key, receiver_mutation_key, "
        "scope.from, scope.to or receipt.<field>."),
    _ce("template.nested", "Templates cannot nest or execute; use one `{symbol}` per placeholder."),
    _ce("pointer.syntax", "Write an RFC 6901 JSON pointer such as `/job_id`."),
    _ce("contract.schema_invalid", "Fix the contract so it validates against its JSON Schema."),
    _ce("contract.semantic_invalid", "Fix the findings the validator reported."),
    _ce("artifact.conflict", "An artifact key already holds other bytes: inspect both; "
        "artifacts are never overwritten.", exit_class=3),
    _ce("artifact.not_found", "Check the artifact store URL and key.", exit_class=3),
    _ce("artifact.invalid_key", "Use a relative key of [A-Za-z0-9._=@+-] segments joined by / without '..'."),
    _ce("artifacts.unavailable", "Check that the artifact store is reachable and writable.",
        exit_class=3),
    _ce("output.unwritable", "Make the named directory writable or choose another one "
        "(--out, --plans): the path could not be created or written.", exit_class=3),
    _ce("filesystem.unavailable", "Check the named path: it exists, is of the expected kind, "
        "and is readable (or writable) by this user, with space left.", exit_class=3),
    _ce("source.column_missing", "Add the column to the source or fix the mapping's source name."),
    _ce("source.type_mismatch", "Fix the source values or the mapping's column type."),
    _ce("source.invalid_utf8", "Re-encode the source text as UTF-8."),
    _ce("source.unreadable", "The file cannot be read as the workload's source.format (damaged, "
        "truncated or another format): replace the file or correct source.format."),
    _ce("source.null_in_required", "Fill the nulls or mark the mapped column nullable."),
    _ce("source.unavailable", "Check that the source file or database is reachable.", exit_class=3),
    _ce("journal.unavailable", "Check the journal URL and that the database is reachable.",
        exit_class=3),
    _ce("journal.corrupt", "Restore the journal file from a backup; never delete it: it holds "
        "the delivery authority (what was admitted and sent).", exit_class=3),
    _ce("journal.revision_conflict", "Another worker moved the operation: reread it and retry "
        "the decision.", exit_class=3),
    _ce("journal.illegal_transition", "The state contract forbids this transition: inspect "
        "the operation.", exit_class=4),
    _ce("journal.lease_held", "Another worker holds the lease: wait for it to expire.",
        exit_class=3),
    _ce("journal.lease_lost", "The lease expired or was taken over: reread the operation.",
        exit_class=3),
    _ce("journal.not_found", "Check the operation id and the journal URL."),
    _ce("journal.foreign_namespace", "The operation belongs to another operation namespace "
        "(tenant, environment or namespace revision) than this command's: run the command with "
        "that namespace's environment file (--environment NAME); nothing was read or changed."),
    _ce("journal.capacity_exhausted", "Wait until a remote job finishes and frees capacity.",
        exit_class=3),
    _ce("journal.durability_unavailable", "Restore the synchronous standby quorum "
        "(synchronous_commit=remote_apply with a streaming synchronous standby).", exit_class=3),
    _ce("journal.sqlite_in_production", "Use a postgresql:// journal in a production "
        "environment; SQLite is for local development."),
    _ce("credential.unavailable", "Provide the credential through env:, file:, "
        "DPONE_CONN_<REF>_<FIELD> or vault:// (VAULT_ADDR and one Vault login in the "
        "environment); nothing was sent, and a rerun of `dpone deliver` or "
        "`dpone delivery resume --apply` submits the child with the same delivery key.",
        exit_class=3),
    # Unavailable (exit 3) yet not fixed by waiting: the operator fixes the credential.
    _ce("credential.rejected", "Fix the credential named by the binding's credential_ref; the "
        "child is resubmitted with the same delivery key by `dpone delivery resume --apply` or "
        "a rerun of `dpone deliver`.", exit_class=3, retry=_R.AFTER_FIX),
    _ce("receiver.unavailable", "The receiver could not be reached within the run's budget; "
        "nothing unproven was sent: once it is reachable, resume the delivery from the journal "
        "(`dpone delivery resume --apply` with its operation id).", exit_class=3),
    _ce("receiver.rate_limited", "The receiver account's shared rate (the profile's rate."
        "submit_per_minute or max_active_requests, shared through the journal by every process "
        "sending to that authority and principal) leaves no turn within this run's submit "
        "budget; nothing was sent: resume the delivery later (`dpone delivery resume --apply` "
        "with its operation id) or spread the deliveries out.", exit_class=3),
    _ce("receiver.terminal_failure", "The receiver ended the job as failed or cancelled and its "
        "counters prove no row applied: fix the cause, then deliver a new generation.",
        exit_class=5),
    _ce("reconcile.evidence_invalid", "Write the evidence as one dpone.operator_evidence.v1 JSON "
        "document (at most 16 KiB): exactly schema, effect (applied | not_applied | "
        "partially_applied), accepted_rows, rejected_rows, receiver_reference, attested_by and an "
        "optional note."),
    _ce("reconcile.digest_mismatch", "The delivery was planned under another release or profile "
        "contract than the one you expected: inspect it and pass the digests `dpone delivery "
        "inspect` shows, or reconcile the delivery you meant."),
    _ce("reconcile.not_reconcilable", "Only a child whose effect is unknown or partial is "
        "reconciled: inspect the delivery and follow its allowed actions."),
    _ce("reconcile.proof_required", "Give one proof: --receipt-id R (the job you found in the "
        "receiver's console) or --evidence FILE (a dpone.operator_evidence.v1 document); with "
        "neither, reconcile queries the receiver by key, which needs a profile that certifies "
        "acknowledgement.query_by_key."),
    _ce("reconcile.absence_unproven", "The receiver holds nothing under the child's key, but "
        "that proves \"not applied\" only where the profile certifies absence and only after "
        "its receipt TTL plus skew margin: reconcile again from proof_possible_at, or prove the "
        "effect with --receipt-id R or --evidence FILE; nothing was recorded.", exit_class=4,
        retry=_R.RECONCILIATION_ONLY),
    _ce("reconcile.key_query_unclassified", "The receiver answered the query by key with a "
        "status or body the profile does not classify: inspect the receiver, or prove the "
        "effect with --receipt-id R or --evidence FILE; nothing was recorded.", exit_class=4,
        retry=_R.RECONCILIATION_ONLY),
    _ce("reconcile.key_mismatch", "The receipt names the job of another delivery key: find the "
        "job whose key is this child's (`dpone delivery inspect` shows it) and reconcile again; "
        "nothing was recorded.", exit_class=4, retry=_R.RECONCILIATION_ONLY),
    _ce("reconcile.counts_contradict", "The counters contradict the sealed rows of the child "
        "(more rows than were sealed, or an applied effect that does not account for every "
        "row): recheck the receiver's counts; nothing was recorded.", exit_class=4,
        retry=_R.RECONCILIATION_ONLY),
    _ce("reconcile.orphan_marker_foreign", "A MAY_ATTEMPT marker key of the child holds a "
        "document that is not a marker of its operation and delivery key: dpone never planned "
        "it, so no reconciliation covers it. Check the artifact store (the key named in "
        "details.marker_key) with whoever administers it; nothing was recorded.", exit_class=4,
        retry=_R.RECONCILIATION_ONLY),
    _ce("plan.not_found", "Compile the plan with `dpone plan` first, or fix the digest."),
    _ce("plan.digest_mismatch", "The plan file was altered; recompile it."),
    _ce("executor.plan_unpinned", "Pass --plan-digest sha256:<64 hex> of a plan published into "
        "the artifact store (`dpone plan WORKLOAD --registry DIR --publish --artifacts URL`): "
        "the executor runs only a pinned plan and never compiles a workload."),
    _ce("executor.environment_mismatch", "Run the plan in the environment it was compiled for, "
        "or compile and publish it for this one: the journal is scoped to the plan's "
        "environment id."),
    _ce("environment.secret_in_url", "Remove the password from the URL: the journal's password "
        "comes from libpq (PGPASSWORD or ~/.pgpass), never from a control-plane file."),
    _ce("environment.locator_conflict", "Drop the option: the environment file names where its "
        "journal and artifacts live, or fix the file."),
    _ce("run.interrupted", "The run was interrupted (Ctrl-C): every child's state is in the "
        "journal and nothing more was sent; continue with `dpone delivery resume --apply` "
        "(the process exits 130).", exit_class=3),
    _ce("environment.store_journal_mismatch", "The artifact store belongs to another journal "
        "of this environment (its state, admitted deliveries and receipts live there): run with "
        "the journal the store names (--journal, or the environment file's control_plane), or "
        "give this journal an artifact store of its own. Nothing was frozen, admitted or sent."),
    _ce("profile.deprecated", "The operation profile is deprecated: point the workload's "
        "operation_profile_ref at its successor version. Plans compiled before the deprecation "
        "keep running by digest (`dpone deliver sha256:<digest>`, `dpone-executor run`)."),
    # Unavailable (exit 3) until a platform operator acts; nothing was sent for the child.
    _ce("governance.profile_revoked", "The platform revoked the plan's operation profile: no "
        "new submit uses it (inspect, receipt polling and reconcile stay available). Once it is "
        "cleared, `dpone admin unrevoke --profile ID@VERSION` lifts it and `dpone delivery "
        "resume --apply` continues.", exit_class=3, retry=_R.AFTER_FIX),
    _ce("governance.binding_revoked", "The platform revoked the plan's connection binding: no "
        "new submit uses it (inspect, receipt polling and reconcile stay available). Once it is "
        "cleared, `dpone admin unrevoke --binding ID` lifts it and `dpone delivery resume "
        "--apply` continues.", exit_class=3, retry=_R.AFTER_FIX),
    _ce("governance.identity_expired", "The binding's remote_identity attestation expired: no "
        "new submit uses it (inspect, receipt polling and reconcile stay available). Recertify "
        "the remote identity (new evidence_ref, verified_at, valid_until), then compile, publish "
        "and deliver a plan of the recertified binding.", exit_class=3, retry=_R.AFTER_FIX),
    _ce("profile.unsupported_policy", "Remove the field or set it to true: a duplicate answer "
        "counts only with its same-key receipt, and verification always accounts for every "
        "sealed row."),
    _ce("profile.fence_not_payload_bound", "Set mutation_fence.key_payload_binding: required "
        "once the receiver is certified to bind the key to the payload, or remove "
        "certified_environments: a fence that does not bind the payload authorizes no replay."),
    _ce("binding.invalid_evidence_ref", "Name the attestation as evidence://<issuer>/<path>, "
        "content-addressed (.../sha256:<64 hex>) in a production environment."),
    _ce("binding.identity_unattested", "A receiver_attested identity needs an authenticated "
        "binding (auth_provider other than none): the receiver attests the principal it "
        "authenticated; without one, use platform_attested with its approved evidence."),
    _ce("observation.limit_reached", "The child's receipt was polled the profile's "
        "observability.max_observations times without a terminal answer: nothing more is "
        "polled or sent; inspect the receiver's job, then query it by delivery key or reconcile "
        "the child.", exit_class=4, retry=_R.RECONCILIATION_ONLY),
    _ce("binding.unknown_policy", "Name a TLS / network policy the binding's environment "
        "defines (tls_policies, network_policies in environments/<id>.yaml)."),
    _ce("binding.authority_forbidden", "Point the binding at an address its network policy "
        "allows, or name a network policy that allows it."),
    _ce("environment.insecure_policy", "A production environment's TLS policies require https "
        "(require_https: true, the default)."),
    _ce("network.address_forbidden", "The receiver's name resolved to an address the binding's "
        "network policy does not allow; nothing was sent. Fix the DNS record or the policy, then "
        "resume the delivery (the child keeps its delivery key).", exit_class=3),
    _ce("network.dns_rebinding", "The receiver's name resolved to an address outside the "
        "answers this run pinned; nothing was sent to it. Check the DNS records, then resume the "
        "delivery in a new run (the child keeps its delivery key).", exit_class=3),
    _ce("tls.policy_unavailable", "Provide the CA bundle the binding's TLS policy names "
        "(ca_bundle_ref file:/path, readable PEM) on the machine that runs the delivery.",
        exit_class=3),
    _ce("retention.payloads_expired", "The delivery's sealed payloads were deleted by payload "
        "retention (`dpone admin prune --apply`) after every child settled: nothing can be "
        "resent or re-read. `dpone delivery inspect` shows its outcome; deliver the data again "
        "as a new delivery (a correction revision).", exit_class=5),
)

ERROR_CATALOG: dict[str, ErrorSpec] = {spec.code: spec for spec in REST_DELIVERY_ERRORS + COMPILE_ERRORS}


@dataclass(frozen=True, slots=True)
class Location:
    """Where an authoring error is: file, 1-based line and column, and the YAML path."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str | None = None

    def render(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        if self.path:
            where += f" ({self.path})"
        return where

    def to_document(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.path}


@dataclass(eq=False, kw_only=True)
class DponeError(Exception):
    """A failure with a catalog code. Construct with keyword arguments only."""

    code: str
    message: str
    location: Location | None = None
    hint: str | None = None
    operation_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in ERROR_CATALOG:
            raise ValueError(f"{self.code!r} is not in the error catalog")
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle through their args; rebuild from the fields instead.
        return (_rebuild, (self.code, self.message, self.location, self.hint, self.operation_id,
                           self.details))

    @property
    def spec(self) -> ErrorSpec:
        return ERROR_CATALOG[self.code]

    @property
    def exit_code(self) -> int:
        return self.spec.exit_code

    @property
    def fix_hint(self) -> str:
        return self.hint or self.spec.operator_action

    def document(self) -> ErrorDocument:
        """The stable ``dpone.error.v1`` document (never a traceback, never a secret)."""
        from dpone.contracts.documents import (  # noqa: PLC0415 - the documents use this catalog
            ErrorDocument,
            ErrorLocation,
        )

        spec = self.spec
        location = self.location
        return ErrorDocument(
            code=self.code,
            message=self.message,
            location=ErrorLocation(file=location.file, line=location.line,
                                   column=location.column, path=location.path)
            if location else None,
            hint=self.fix_hint,
            operation_id=self.operation_id,
            exit_code=self.exit_code,
            retryability=spec.retryability,
            severity=spec.severity,
            details=self.details,
        )

    def to_document(self) -> dict[str, Any]:
        """:meth:`document` as JSON-ready data."""
        return self.document().model_dump(mode="json", by_alias=True)

    def __str__(self) -> str:
        where = f"{self.location.render()}: " if self.location else ""
        return f"{where}{self.code}: {self.message}"


def _rebuild(code: str, message: str, location: Location | None, hint: str | None,
             operation_id: str | None, details: dict[str, Any]) -> DponeError:
    return DponeError(code=code, message=message, location=location, hint=hint,
                      operation_id=operation_id, details=details)
