"""Small Arrow helpers shared by the encoders: text scalars, whole-buffer scans, masked patches.

Every formatted column is ``large_string`` so that a slice's text never overflows 32-bit
offsets, whatever the row width.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

TEXT = pa.large_string()

Array = Any
"""A ``pyarrow.Array`` (pyarrow ships no type information)."""


def text(value: str) -> Any:
    """A ``large_string`` scalar, so kernels never mix string and large_string inputs."""
    return pa.scalar(value, TEXT)


def as_text(array: Array) -> Array:
    """The array cast to ``large_string`` (nulls kept)."""
    return array if array.type == TEXT else pc.cast(array, TEXT)


def join(*parts: Array, separator: str = "") -> Array:
    """Element-wise concatenation of text arrays and scalars; null if any input is null."""
    return pc.binary_join_element_wise(*parts, text(separator))


def character_data(array: Array) -> bytes:
    """The bytes of a string array's values, in row order (null slots contribute nothing)."""
    if len(array) == 0:
        return b""
    _, offsets, data = array.buffers()
    if data is None:
        return b""
    form, width = ("<q", 8) if array.type == TEXT else ("<i", 4)
    start = struct.unpack_from(form, offsets, width * array.offset)[0]
    end = struct.unpack_from(form, offsets, width * (array.offset + len(array)))[0]
    return bytes(data[start:end].to_pybytes())


def needles_in(array: Array, needles: Iterable[str]) -> tuple[str, ...]:
    """The needles that occur in the array's character data, scanned as one byte string.

    The scan can over-report (a needle spanning adjacent values, bytes under a null slot) but
    never misses: a needle left out occurs in no value. One memchr-speed search per needle
    replaces a per-row kernel in the common case.
    """
    blob = character_data(array)
    return tuple(needle for needle in needles if needle.encode("utf-8") in blob)


def buffer_contains(array: Array, needles: Iterable[str]) -> bool:
    """Whether any needle may occur in a value (see :func:`needles_in`)."""
    return bool(needles_in(array, needles))


def contains_any(values: Array, needles: Iterable[str]) -> Array | None:
    """Per row: whether the value contains one of the needles (None when no row can).

    One literal search per needle present in the buffer: several times faster than a
    regular expression with a character class.
    """
    mask = None
    for needle in needles_in(values, needles):
        found = pc.match_substring(values, needle)
        mask = found if mask is None else pc.or_(mask, found)
    return mask


def any_true(mask: Array) -> bool:
    """Whether a boolean array holds at least one true (nulls count as false)."""
    return bool(pc.any(mask).as_py())


def first_true(mask: Array) -> int:
    """The index of the first true of a boolean array with at least one true."""
    return int(pc.index(pc.fill_null(mask, False), True).as_py())


def patch(array: Array, mask: Array, rewrite: Callable[[Array], Array]) -> Array:
    """Replace the masked values by ``rewrite`` of just those values (mask nulls: unchanged)."""
    mask = pc.fill_null(mask, False)
    if not any_true(mask):
        return array
    return pc.replace_with_mask(array, mask, as_text(rewrite(pc.filter(array, mask))))


def text_bytes(array: Array) -> bytes:
    """The concatenated character data of a null-free text array, in row order."""
    return character_data(as_text(array))
