"""float64 -> text in Python ``repr`` form, computed with Arrow kernels.

The rule (CSV and JSON alike): the shortest decimal digits that round-trip to the same
float64, laid out exactly as CPython's ``repr(float)``: fixed notation when the decimal
exponent ``e`` (value = d.ddd x 10**e) satisfies -4 <= e < 16, with at least one fractional
digit (``1.0``, ``-0.0``, ``0.0001``, ``123.456``); otherwise scientific notation with a
signed, at least two-digit exponent (``1e-05``, ``1e+16``, ``1.5e-300``). NaN and
infinities have no encoding and are refused before formatting.

Arrow's cast produces the same shortest digits but chooses notation by its own rule, so its
output is accepted only where a pattern proves it already has the ``repr`` layout; the rest is
repaired with kernels (append ``.0``, pad the exponent) or, for the rare values whose notation
differs (e.g. ``1e+15`` -> ``1000000000000000.0``), re-rendered with ``repr``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from dpone.codecs._arrow import TEXT, Array, as_text, buffer_contains, join, patch, text

# Arrow text already in repr layout: fixed, with a fraction, 1..16 integer digits, or a
# leading "0." followed by at most three zeros.
_FIXED_SAME = r"^-?(?:[1-9][0-9]{0,15}\.[0-9]+|0\.0{0,3}[1-9][0-9]*)$"
# An integral value of at most 16 digits: repr adds ".0".
_INTEGRAL = r"^-?[0-9]{1,16}$"
# Scientific notation in the range where repr is scientific too (exponent < -4 or >= 16).
_SCIENTIFIC = r"^-?[1-9](?:\.[0-9]+)?e(?:-(?:[5-9]|[1-9][0-9]+)|\+(?:1[6-9]|[2-9][0-9]|[1-9][0-9]{2,}))$"
_SHORT_NEGATIVE_EXPONENT = r"e-([5-9])$"
_FAST_MAX_LENGTH = 16


def first_non_finite(values: Array) -> int | None:
    """The index of the first NaN or infinity (nulls are fine), or None."""
    if values.null_count == len(values):
        return None
    bad = pc.invert(pc.fill_null(pc.is_finite(values), True))
    if not pc.any(bad).as_py():
        return None
    return int(pc.index(bad, True).as_py())


def format_float(values: Array) -> Array:
    """Finite float64 values as ``large_string`` text in repr form; nulls stay null."""
    rendered = as_text(pc.cast(values, TEXT))
    if len(rendered) == rendered.null_count:
        return rendered
    if _plain_fixed(rendered):
        # Only fixed notation with at most 14 integer digits: add ".0" where no "." is.
        return patch(rendered, pc.invert(pc.match_substring(rendered, ".")), _append_point_zero)
    return patch(rendered, pc.invert(pc.match_substring_regex(rendered, _FIXED_SAME)), _repair)


def _plain_fixed(rendered: Array) -> bool:
    """True when every value is short fixed notation with no leading "0.0000"."""
    if buffer_contains(rendered, ("e", "n", "0.0000")):
        return False
    longest = pc.max(pc.binary_length(rendered)).as_py()
    return longest is not None and longest <= _FAST_MAX_LENGTH


def _append_point_zero(values: Array) -> Array:
    return join(values, text(".0"))


def _pad_exponent(values: Array) -> Array:
    return pc.replace_substring_regex(values, _SHORT_NEGATIVE_EXPONENT, r"e-0\1")


def _python_repr(values: Array) -> Array:
    # Arrow's text is the shortest round-trip form, so float(text) is the exact value.
    return pa.array([repr(float(value)) for value in values.to_pylist()], TEXT)


def _repair(values: Array) -> Array:
    integral = pc.match_substring_regex(values, _INTEGRAL)
    scientific = pc.match_substring_regex(values, _SCIENTIFIC)
    other = pc.invert(pc.or_(integral, scientific))
    values = patch(values, integral, _append_point_zero)
    values = patch(values, scientific, _pad_exponent)
    return patch(values, other, _python_repr)
