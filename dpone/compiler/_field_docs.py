"""The field descriptions of the CLI's documents, taken from their attribute docstrings when their
JSON Schemas are generated, not each time a command imports them.

A field of a :class:`~dpone.contracts.documents.Report` is documented by the string right after
its annotation, as pydantic's ``use_attribute_docstrings`` reads it. Reading them means parsing
every document class's source, about 0.05 s of every command's start, for text only the
published schemas carry. So the models do not read them; :func:`describe` adds them to a
generated schema: to each Report's object schema (the root and its ``$defs``), a description
for each property that has none, from the class in the model's MRO that declares the field.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from functools import cache
from typing import Any

from pydantic import BaseModel

from dpone.contracts.documents import Report


def _reports(root: type[Report] = Report) -> Iterator[type[Report]]:
    for subclass in root.__subclasses__():
        yield subclass
        yield from _reports(subclass)


@cache
def _own_docstrings(cls: type[Any]) -> dict[str, str]:
    """The docstrings of the fields ``cls``'s own body annotates (``name: T`` then a string)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = ast.parse(source).body[0]
    if not isinstance(body, ast.ClassDef):
        return {}
    docs: dict[str, str] = {}
    for field, following in zip(body.body, body.body[1:], strict=False):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[field.target.id] = inspect.cleandoc(following.value.value)
    return docs


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """Each documented field of ``model`` by the name its schema gives it (its alias): the
    docstring in the Report class nearest in the MRO whose body annotates the field."""
    docs: dict[str, str] = {}
    for name, field in model.model_fields.items():
        owner = next((cls for cls in model.__mro__
                      if name in inspect.get_annotations(cls)), None)
        if owner is None or not issubclass(owner, Report):
            continue
        if (text := _own_docstrings(owner).get(name)) is not None:
            docs[field.alias or name] = text
    return docs


def _describe_object(node: dict[str, Any], model: type[BaseModel]) -> None:
    properties = node.get("properties", {})
    for name, text in field_docstrings(model).items():
        if name in properties:
            properties[name].setdefault("description", text)


def describe(schema: dict[str, Any], root: Any) -> None:
    """Add the attribute docstrings of every Report in ``schema`` (generated from ``root``)."""
    reports = {cls.__name__: cls for cls in _reports()}
    if isinstance(root, type) and issubclass(root, Report):
        _describe_object(schema, root)
    for name, node in schema.get("$defs", {}).items():
        if name in reports:
            _describe_object(node, reports[name])
