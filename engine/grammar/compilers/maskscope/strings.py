"""JSON strings with minLength/maxLength, pattern and format, as GBNF.

A string's grammar is one language (the pattern's, else the format's) bounded by the
lengths, counted in characters: the regex translator re-bounds a pattern when it can
(`^[a-z]+$` with maxLength 8 becomes `[a-z]{1,8}`). What cannot be held together is
reported, and the grammar then errs on the side of accepting more.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from engine.grammar.compilers.maskscope.formats import FORMATS
from engine.grammar.compilers.maskscope.regex import (
    MAX_REPEAT,
    RegexUnsupported,
    Whole,
    bounded,
    to_gbnf,
    whole_strings,
)
from engine.grammar.compilers.maskscope.rules import Rules
from engine.grammar.report import Unenforced

_QUOTE = '"\\""'


def string_rule(
    rules: Rules,
    node: Mapping[str, Any],
    path: str,
    gaps: list[Unenforced],
    *,
    formats: Collection[str] | None = None,
) -> str:
    """A GBNF expression for one whole JSON string (quotes included) satisfying node's
    minLength/maxLength, pattern and format; what it cannot enforce goes to `gaps`.

    `formats` are the formats the schema's draft asserts (`formats.asserted_formats`);
    any other format is an annotation that jsonschema does not check either. None: all."""
    lo, hi = _lengths(node, path, gaps)
    chosen = _language(node, path, gaps, formats)
    if chosen is None:
        if (lo, hi) == (0, None):
            return "json-string"
        if hi == 0:  # llguidance refuses a repeat of `{0}`
            return rules.add("string", f"{_QUOTE} {_QUOTE}")
        count = f"{{{lo},{'' if hi is None else hi}}}" if lo != hi else f"{{{lo}}}"
        return rules.add("string", f"{_QUOTE} json-char{count} {_QUOTE}")
    keyword, whole = chosen
    if (lo, hi) != (0, None):
        whole = _with_lengths(whole, lo, hi, keyword, path, gaps)
    emitted = to_gbnf(rules, whole)
    gaps.extend(Unenforced(path, keyword, note) for note in emitted.loosened)
    return rules.add("string", f"{_QUOTE} {emitted.gbnf} {_QUOTE}")


def regex_rule(rules: Rules, pattern: str, path: str, gaps: list[Unenforced]) -> str | None:
    """A GBNF expression for the JSON-escaped text (no quotes) of strings containing a match
    of `pattern`; None when the pattern cannot be translated (the caller reports it)."""
    try:
        emitted = to_gbnf(rules, whole_strings(pattern))
    except RegexUnsupported:
        return None
    gaps.extend(Unenforced(path, "pattern", note) for note in emitted.loosened)
    return rules.add("pattern", emitted.gbnf)


def regex_problem(pattern: str) -> str | None:
    """Why `pattern` cannot become a grammar, in a few words; None when it can."""
    try:
        whole_strings(pattern)
    except RegexUnsupported as exc:
        return exc.message
    return None


def _lengths(node: Mapping[str, Any], path: str, gaps: list[Unenforced]) -> tuple[int, int | None]:
    lo, hi = node.get("minLength", 0), node.get("maxLength")
    lo = int(lo) if _is_count(lo) else 0
    hi = int(hi) if _is_count(hi) else None
    if hi is not None and hi > MAX_REPEAT:
        gaps.append(Unenforced(path, "maxLength", "too long for llama.cpp's grammar engine"))
        hi = None
    if lo > MAX_REPEAT:
        gaps.append(
            Unenforced(path, "minLength", f"held to {MAX_REPEAT}: longer is too long for llama.cpp")
        )
        lo = MAX_REPEAT
    if hi is not None and hi < lo:  # no string fits; accept what either bound allows
        gaps.append(Unenforced(path, "maxLength", "smaller than minLength: no string fits"))
        hi = None
    return lo, hi


def _is_count(value: Any) -> bool:
    # JSON Schema counts 1.0 as an integer; a bool is not one.
    return isinstance(value, int | float) and not isinstance(value, bool) and value == int(value)


def _language(
    node: Mapping[str, Any],
    path: str,
    gaps: list[Unenforced],
    formats: Collection[str] | None,
) -> tuple[str, Whole] | None:
    """The pattern's strings, else the format's; the other one is reported."""
    found: list[tuple[str, Whole]] = []
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            found.append(("pattern", whole_strings(pattern)))
        except RegexUnsupported as exc:
            gaps.append(Unenforced(path, "pattern", exc.message))
    name = node.get("format")
    if isinstance(name, str):
        spec = FORMATS.get(name)
        if formats is not None and name not in formats:
            note = "an annotation in this draft: jsonschema does not check it either"
            gaps.append(Unenforced(path, "format", note))
        elif spec is None:
            gaps.append(Unenforced(path, "format", f"the format {name!r} is not translated"))
        elif found:
            gaps.append(Unenforced(path, "format", "not enforced together with the pattern"))
        else:
            found.append(("format", whole_strings(spec.regex, spec.flags)))
            if spec.gap:
                gaps.append(Unenforced(path, "format", f"{name}: {spec.gap}"))
    return found[0] if found else None


def _with_lengths(
    whole: Whole, lo: int, hi: int | None, keyword: str, path: str, gaps: list[Unenforced]
) -> Whole:
    rebound = bounded(whole, lo, hi)
    if rebound is not None and rebound.options:
        return rebound
    why = (
        f"no string satisfies both the {keyword} and the length"
        if rebound is not None
        else f"not enforced together with the {keyword}"
    )
    for key in ("minLength", "maxLength"):
        if (key == "minLength" and lo > 0) or (key == "maxLength" and hi is not None):
            gaps.append(Unenforced(path, key, why))
    return whole
