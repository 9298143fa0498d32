"""The documents' field descriptions come from their attribute docstrings when their schemas are
generated (:mod:`dpone.compiler._field_docs`), as pydantic's ``use_attribute_docstrings`` reads
them, and not when a command imports the models."""

from __future__ import annotations

from pydantic import BaseModel, Field, TypeAdapter

from dpone.compiler._field_docs import describe, field_docstrings
from dpone.contracts._base import StrictModel
from dpone.contracts.documents import Report


class _Plain(StrictModel):
    inherited_plain: int
    """Not a Report's: never a description."""


class _DocParent(Report):
    counted: int
    """How many.

        Indented continuation."""
    renamed: str = Field(alias="renamed-field")
    """Under its alias."""
    undocumented: int
    explicit: int = Field(description="The field's own description.")
    """A docstring the explicit description wins over."""


class _DocChild(_DocParent, _Plain):
    counted: int  # redeclared without a docstring: the parent's does not carry over
    extra: bool
    """Only the child's."""


class _DocHolder(Report):
    child: _DocChild
    """The nested document."""


def test_each_field_has_the_docstring_of_the_report_that_declares_it() -> None:
    assert field_docstrings(_DocParent) == {
        "counted": "How many.\n\nIndented continuation.",
        "renamed-field": "Under its alias.",
        "explicit": "A docstring the explicit description wins over.",
    }
    assert field_docstrings(_DocChild) == {
        "renamed-field": "Under its alias.",
        "explicit": "A docstring the explicit description wins over.",
        "extra": "Only the child's.",
    }


def test_a_generated_schema_describes_the_root_and_every_nested_report() -> None:
    schema = _DocHolder.model_json_schema(by_alias=True, mode="validation")
    describe(schema, _DocHolder)
    assert schema["properties"]["child"]["description"] == "The nested document."
    child = schema["$defs"]["_DocChild"]["properties"]
    assert child["extra"]["description"] == "Only the child's."
    assert child["renamed-field"]["description"] == "Under its alias."
    assert child["explicit"]["description"] == "The field's own description."
    assert "description" not in child["counted"]
    assert "description" not in child["undocumented"]
    assert "description" not in child["inherited_plain"]


def test_a_union_root_describes_its_members() -> None:
    source = _DocParent | _DocHolder
    schema = TypeAdapter(source).json_schema(by_alias=True, mode="validation")
    describe(schema, source)
    assert schema["$defs"]["_DocParent"]["properties"]["counted"]["description"] == (
        "How many.\n\nIndented continuation.")


def test_the_models_themselves_carry_no_docstring_descriptions() -> None:
    """What keeps a command's start from parsing the documents' sources."""
    assert _DocParent.model_fields["counted"].description is None
    assert isinstance(_DocParent, type) and issubclass(_DocParent, BaseModel)
