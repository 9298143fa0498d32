"""The indexed delivery state-machine contract the semantic checks read, and the named kinds of
transition the specification singles out (a reconciled resubmit, a receipt found running, an
orphan MAY_ATTEMPT marker consumed), which several checks exempt or require."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dpone.compiler._yaml import YamlPath
from dpone.contracts._axes import AXES


@dataclass(frozen=True)
class Edge:
    id: str
    automatic: bool
    source: str
    target: str
    kind: str
    evidence: str
    lease: str
    obj: dict[str, Any]
    path: YamlPath

    def get(self, key: str) -> list[str]:
        return list(self.obj.get(key, []))


class Model:
    """Index over the plain contract mapping."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.tuples: dict[str, dict[str, str]] = {}
        self.tuple_paths: dict[str, YamlPath] = {}
        for i, obj in enumerate(data["legal_tuples"]):
            self.tuples.setdefault(obj["name"], {axis: obj[axis] for axis in AXES})
            self.tuple_paths.setdefault(obj["name"], ("legal_tuples", i))
        self.edges = [
            Edge(obj["id"], key == "automatic_transitions", obj["from"], obj["to"],
                 obj["trigger"]["kind"], obj["trigger"]["evidence"], obj["cas"]["lease"], obj,
                 (key, i))
            for key in ("automatic_transitions", "operator_transitions")
            for i, obj in enumerate(data[key])
        ]
        self.terminal = set(data["terminal_tuples"])
        self.initial = data["initial_tuple"]

    def legal(self, edge: Edge) -> bool:
        return edge.source in self.tuples and edge.target in self.tuples

    def pairs(self, *, automatic_only: bool = False) -> Iterator[tuple[Edge, dict[str, str],
                                                                      dict[str, str]]]:
        for edge in self.edges:
            if self.legal(edge) and (edge.automatic or not automatic_only):
                yield edge, self.tuples[edge.source], self.tuples[edge.target]

    def reach(self, start: str, *, automatic_only: bool) -> set[str]:
        seen, queue = {start}, deque([start])
        while queue:
            name = queue.popleft()
            for edge in self.edges:
                if edge.source == name and self.legal(edge) and edge.target not in seen and (
                        edge.automatic or not automatic_only):
                    seen.add(edge.target)
                    queue.append(edge.target)
        return seen


def is_reconciled_resubmit(edge: Edge, src: dict[str, str], dst: dict[str, str]) -> bool:
    """The one automatic exit of a finalized tuple besides promotion: an operator reconciliation
    proved NONE_PROVEN (guard ``absence_reconciled``), so the mutation lease submits the same
    delivery key again; the new attempt starts its own acknowledgement and verification."""
    return (edge.automatic and edge.lease == "mutation" and src["execution_state"] == "FINALIZED"
            and src["remote_effect"] == "NONE_PROVEN" and dst["execution_state"] == "SUBMITTING"
            and "absence_reconciled" in edge.get("requires"))


def is_receipt_found_running(edge: Edge, src: dict[str, str], dst: dict[str, str]) -> bool:
    """An operator resolution that records a receipt it polled read-only and found running: the
    acknowledgement becomes the receiver's answer and poll_receipt continues."""
    return (not edge.automatic and edge.obj.get("reconciliation") == "resolve"
            and src["execution_state"] == "VERIFYING"
            and dst["execution_state"] in {"ACCEPTED", "WAITING"}
            and {"receipt_persisted", "read_only_receiver_evidence"} <= set(edge.get("requires")))


def is_orphan_marker_found(edge: Edge, src: dict[str, str], dst: dict[str, str]) -> bool:
    """The mutation lease found the next attempt's MAY_ATTEMPT marker key holding another marker
    (of another journal epoch, or one a reconciliation did not cover) before a first attempt, a
    due retry or a resubmit an operator reconciliation allowed (guard ``absence_reconciled``):
    the orphan's ordinal is consumed (never planned again) and the effect becomes UNKNOWN, so
    only a reconciliation can lead to a new attempt."""
    before = (src["execution_state"] in {"SEALED", "RETRY_WAIT"} or (
        src["execution_state"] == "FINALIZED" and src["remote_effect"] == "NONE_PROVEN"
        and "absence_reconciled" in edge.get("requires")))
    return (edge.automatic and edge.lease == "mutation" and before
            and dst["execution_state"] == "FINALIZED" and dst["remote_effect"] == "UNKNOWN"
            and "orphan_marker_found" in edge.get("requires"))


def is_orphan_marker_covered(edge: Edge, src: dict[str, str], dst: dict[str, str]) -> bool:
    """Inside an operator reconciliation (between open and resolve, the tuple unchanged), an
    orphan MAY_ATTEMPT marker of the child's delivery key is consumed: the reconciliation that
    proves the key's effect covers it, and its ordinal is never planned again."""
    return (not edge.automatic and edge.lease == "operator" and src == dst
            and src["execution_state"] == "VERIFYING" and edge.obj.get("reconciliation") is None
            and {"operator_authority_audited", "orphan_marker_found"} <= set(edge.get("requires")))


def is_orphan_marker_consumed(edge: Edge, src: dict[str, str], dst: dict[str, str]) -> bool:
    """An orphan MAY_ATTEMPT marker's ordinal is consumed: found before an attempt, or covered
    by a reconciliation."""
    return is_orphan_marker_found(edge, src, dst) or is_orphan_marker_covered(edge, src, dst)
