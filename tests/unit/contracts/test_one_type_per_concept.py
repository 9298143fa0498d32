"""One type per concept: the generation, the state tuple, the guard's evidence."""

from __future__ import annotations

import dpone.contracts
from dpone.contracts import journal, sealed, state
from dpone.contracts._errors import ErrorSpec, EvidenceRetention


def test_one_generation() -> None:
    assert sealed.ChildIdentities.model_fields["generation"].annotation is journal.Generation
    assert journal.ChildOperation.model_fields["generation"].annotation is journal.Generation
    assert journal.ParentAdmission.model_fields["generation"].annotation is journal.Generation


def test_one_state_tuple() -> None:
    assert journal.ChildOperation.model_fields["axes"].annotation is state.StateTuple
    assert journal.ChildStanding.model_fields["axes"].annotation is state.StateTuple
    assert dpone.contracts.StateTuple is state.StateTuple
    assert not hasattr(journal, "Axes")


def test_one_evidence_type() -> None:
    assert ErrorSpec.__annotations__["evidence"] == "EvidenceRetention"
    assert dpone.contracts.EvidenceRetention is EvidenceRetention
    assert not hasattr(dpone.contracts, "Evidence")
    assert state.Evidence.__module__ == "dpone.contracts.state"
