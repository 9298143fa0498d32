"""One-shot fault rules, installed through ``POST /mock/_faults`` and consumed by requests.

A rule is ``{"match": {"method": "POST", "path_prefix": "/mock/v1/..."}, "fault": <kind>,
"times": 1, ...parameters}``. A request consumes the first installed rule whose method and
path prefix match and whose fault applies to the request's endpoint; each firing uses one of
its ``times`` and a rule with none left is gone.
"""

from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Any

_MAX_RULES = 256
_MAX_TIMES = 1000
_MAX_DELAY_MS = 60_000


class Endpoint(enum.Enum):
    SYNC_SUBMIT = "sync_submit"
    ASYNC_SUBMIT = "async_submit"
    JOB_STATUS = "job_status"
    KEY_LOOKUP = "key_lookup"
    CONTROL = "control"
    OTHER = "other"


def classify(method: str, path: str) -> Endpoint:
    if path.startswith("/mock/_"):
        return Endpoint.CONTROL
    if method == "POST" and path.startswith("/mock/v1/batches/"):
        return Endpoint.SYNC_SUBMIT
    if method == "POST" and path.rstrip("/") == "/mock/v1/dataset-jobs":
        return Endpoint.ASYNC_SUBMIT
    if method == "GET" and path.startswith("/mock/v1/dataset-jobs/"):
        return Endpoint.JOB_STATUS
    if method == "GET" and path.startswith("/mock/v1/dataset-job-keys/"):
        return Endpoint.KEY_LOOKUP
    return Endpoint.OTHER


_ANYWHERE = frozenset({Endpoint.SYNC_SUBMIT, Endpoint.ASYNC_SUBMIT, Endpoint.JOB_STATUS,
                       Endpoint.KEY_LOOKUP, Endpoint.OTHER})
_JOBS = frozenset({Endpoint.ASYNC_SUBMIT, Endpoint.JOB_STATUS})

# fault kind -> (endpoints it applies to, {parameter: (required, kind of value)})
_KINDS: dict[str, tuple[frozenset[Endpoint], dict[str, tuple[bool, str]]]] = {
    "commit_then_drop": (_ANYWHERE, {}),
    "status": (_ANYWHERE, {"status": (True, "status"), "retry_after": (False, "retry_after"),
                           "retry_after_date_in": (False, "count"), "after_commit": (False, "bool")}),
    "partial": (frozenset({Endpoint.SYNC_SUBMIT, Endpoint.ASYNC_SUBMIT}),
                {"accepted_rows": (True, "count")}),
    "expire_receipt": (_JOBS, {"status": (False, "gone")}),
    "cancel_job": (_JOBS, {"apply_rows": (False, "count")}),
    "fail_job": (_JOBS, {"apply_rows": (False, "count")}),
    "slow": (_ANYWHERE, {"delay_ms": (True, "delay")}),
    "refuse_before_read": (_ANYWHERE, {"status": (False, "status"),
                                       "retry_after": (False, "retry_after"),
                                       "retry_after_date_in": (False, "count")}),
}
FAULT_KINDS = tuple(_KINDS)


class FaultRuleError(ValueError):
    """An invalid rule; nothing of the request that carried it is installed."""


@dataclass(frozen=True)
class FaultRule:
    fault: str
    path_prefix: str
    method: str | None = None
    times: int = 1
    params: dict[str, Any] = field(default_factory=dict)

    def applies(self, method: str, path: str, endpoint: Endpoint) -> bool:
        return ((self.method is None or self.method == method) and path.startswith(self.path_prefix)
                and endpoint in _KINDS[self.fault][0])

    def int_param(self, name: str, default: int) -> int:
        value = self.params.get(name, default)
        return value if isinstance(value, int) else default

    def to_json(self, remaining: int) -> dict[str, Any]:
        match: dict[str, Any] = {"path_prefix": self.path_prefix}
        if self.method is not None:
            match["method"] = self.method
        return {"match": match, "fault": self.fault, "times": remaining, **self.params}


def _check_value(name: str, kind: str, value: Any, where: str) -> None:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    valid = {
        "status": is_int and 400 <= value <= 599,
        "gone": value in (404, 410) and is_int,
        "count": is_int and value >= 0,
        "delay": is_int and 0 <= value <= _MAX_DELAY_MS,
        "bool": isinstance(value, bool),
        "retry_after": (is_int and value >= 0) or (isinstance(value, str) and 0 < len(value) <= 64
                                                   and value.isprintable()),
    }[kind]
    if not valid:
        raise FaultRuleError(f"{where}: invalid value for {name!r}")


def parse_rule(raw: Any, index: int) -> FaultRule:
    where = f"rule {index}"
    if not isinstance(raw, dict):
        raise FaultRuleError(f"{where}: a rule is a JSON object")
    kind = raw.get("fault")
    if kind not in _KINDS:
        raise FaultRuleError(f"{where}: 'fault' must be one of {', '.join(FAULT_KINDS)}")
    allowed = _KINDS[kind][1]
    unknown = sorted(set(raw) - {"match", "fault", "times", *allowed})
    if unknown:
        raise FaultRuleError(f"{where}: unknown field(s) {', '.join(map(repr, unknown[:5]))}")
    match = raw.get("match")
    if not isinstance(match, dict) or set(match) - {"method", "path_prefix"}:
        raise FaultRuleError(f"{where}: 'match' is {{'method'?, 'path_prefix'}}")
    prefix, method = match.get("path_prefix"), match.get("method")
    if not isinstance(prefix, str) or not prefix.startswith("/mock/v1/") or len(prefix) > 256:
        raise FaultRuleError(f"{where}: 'path_prefix' must start with /mock/v1/")
    if method is not None and (not isinstance(method, str) or method.upper() not in {"GET", "POST"}):
        raise FaultRuleError(f"{where}: 'method' must be GET or POST")
    times = raw.get("times", 1)
    if not isinstance(times, int) or isinstance(times, bool) or not 1 <= times <= _MAX_TIMES:
        raise FaultRuleError(f"{where}: 'times' must be an integer in 1..{_MAX_TIMES}")
    params = {name: raw[name] for name in allowed if name in raw}
    for name, (required, value_kind) in allowed.items():
        if name in params:
            _check_value(name, value_kind, params[name], where)
        elif required:
            raise FaultRuleError(f"{where}: {kind} needs {name!r}")
    if "retry_after" in params and "retry_after_date_in" in params:
        raise FaultRuleError(f"{where}: give 'retry_after' or 'retry_after_date_in', not both")
    return FaultRule(fault=kind, path_prefix=prefix, method=method.upper() if method else None,
                     times=times, params=params)


@dataclass
class _Installed:
    rule: FaultRule
    remaining: int


class FaultBook:
    """Installed rules and how many firings each has left."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[_Installed] = []

    def install(self, raw: Any) -> int:
        if not isinstance(raw, list):
            raise FaultRuleError("the body must be a JSON list of rules")
        rules = [parse_rule(item, index) for index, item in enumerate(raw)]
        with self._lock:
            if len(self._rules) + len(rules) > _MAX_RULES:
                raise FaultRuleError(f"at most {_MAX_RULES} rules may be pending")
            self._rules.extend(_Installed(rule, rule.times) for rule in rules)
            return len(self._rules)

    def take(self, method: str, path: str, endpoint: Endpoint) -> FaultRule | None:
        with self._lock:
            for entry in self._rules:
                if entry.rule.applies(method, path, endpoint):
                    entry.remaining -= 1
                    if entry.remaining == 0:
                        self._rules.remove(entry)
                    return entry.rule
            return None

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [entry.rule.to_json(entry.remaining) for entry in self._rules]

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()
