"""Sets of code points as sorted, merged (lo, hi) ranges, both ends included: what a
character class of the grammar holds. UTF-8 text never holds a surrogate, so no set
written into a grammar does."""

from __future__ import annotations

from collections.abc import Iterable

MAX_CODE = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

Ranges = tuple[tuple[int, int], ...]


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return tuple(merged)


def complement(ranges: Ranges) -> Ranges:
    """Every code point outside the normalized `ranges`, surrogates left out."""
    out, start = [], 0
    for lo, hi in ranges:
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE:
        out.append((start, MAX_CODE))
    return without_surrogates(out)


def without_surrogates(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Lone surrogates cannot occur in UTF-8 text, and llguidance refuses them in classes."""
    s_lo, s_hi = SURROGATES
    out: list[tuple[int, int]] = []
    for lo, hi in ranges:
        if lo < s_lo:
            out.append((lo, min(hi, s_lo - 1)))
        if hi > s_hi:
            out.append((max(lo, s_hi + 1), hi))
    return tuple(out)


ANY: Ranges = without_surrogates(((0, MAX_CODE),))
