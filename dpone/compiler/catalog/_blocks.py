"""The catalog's pages as data: headings, paragraphs, lists and tables of plain text, code and
links. One page is written once and rendered twice, as Markdown and as HTML, so the two forms
never disagree and each renderer escapes every value in one place."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

INDEX = "index"
"""The page key of the catalog's index; a profile page's key is its ref (``id@version``)."""


@dataclass(frozen=True, slots=True)
class Code:
    """A literal value: a path template, a status, a field name, a digest."""

    text: str


@dataclass(frozen=True, slots=True)
class Strong:
    text: str


@dataclass(frozen=True, slots=True)
class Link:
    """A link to another page of the catalog, by its key (each renderer makes the address)."""

    text: str
    page: str


Inline = str | Code | Strong | Link
Text = tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: Text


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: Text


@dataclass(frozen=True, slots=True)
class Bullets:
    items: tuple[Text, ...]


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Text, ...], ...]


Block = Heading | Paragraph | Bullets | Table


@dataclass(frozen=True, slots=True)
class Page:
    key: str
    title: str
    blocks: tuple[Block, ...]


def text(*parts: Inline | Text | None) -> Text:
    """Parts joined into one text; a nested text is spliced in and None is left out."""
    joined: list[Inline] = []
    for part in parts:
        if part is None:
            continue
        if isinstance(part, tuple):
            joined.extend(part)
        else:
            joined.append(part)
    return tuple(joined)


def codes(values: Iterable[object], separator: str = ", ", empty: str = "none") -> Text:
    """Each value as code, separated; ``empty`` (plain) when there is none."""
    items = [Code(str(value)) for value in values]
    if not items:
        return (empty,)
    joined: list[Inline] = []
    for index, item in enumerate(items):
        if index:
            joined.append(separator)
        joined.append(item)
    return tuple(joined)


def row(*cells: Inline | Text) -> tuple[Text, ...]:
    """One table row; a bare string or code is a one-part cell."""
    return tuple(cell if isinstance(cell, tuple) else (cell,) for cell in cells)


def table(header: Iterable[str], rows: Iterable[tuple[Text, ...]]) -> Table:
    return Table(tuple(header), tuple(rows))


def fields(pairs: Iterable[tuple[str, Inline | Text]],
           header: tuple[str, str] = ("field", "value")) -> Table:
    """A two-column table of named values."""
    return table(header, (row(name, value) for name, value in pairs))
