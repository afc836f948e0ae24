"""What the grammar does not enforce, and where it enforces more than the schema says.

Unenforced keywords come from each compiler's own report (CompiledSchema.unenforced; for
llama.cpp's converter, which says nothing, the mirror in
engine/grammar/compilers/llamacpp/coverage.py).
Over-constraint is known for llama.cpp's converter only, from the same mirror of its branch
chain: an object it writes through its `properties` branch with `additionalProperties` left
out is closed (a validator allows other keys; the grammar refuses them), and an `allOf`
object is closed with every member's properties made required. Maskscope's compiler and
llguidance's follow the schema there (the fidelity tables in docs/workbench.md: every valid
instance accepted), so nothing is reported for them.
"""

from __future__ import annotations

from typing import Any

from engine.grammar.compile import CompiledSchema
from engine.grammar.compilers.llamacpp.coverage import _used_keywords
from engine.schema.pointer import path_text
from engine.workbench.entries import Problem
from engine.workbench.locate import Path, Spans, path_parts
from engine.workbench.walk import keywords_on, subschemas

# Where the converter never writes a grammar for the subschema (it skips these keywords).
_UNREAD = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "dependentSchemas",
        "patternProperties",
    }
)


def unenforced_problems(compiled: CompiledSchema, spans: Spans) -> list[Problem]:
    out = []
    for gap in compiled.unenforced:
        offset = keyword_offset(spans, path_parts(gap.path), gap.keyword)
        line, column = spans.line_col(offset) if offset is not None else (None, None)
        message = f"`{gap.keyword}` is not enforced by the grammar: {gap.note}"
        out.append(
            Problem(
                "warning", "unenforced", message, gap.path, line, column,
                keyword=gap.keyword, reason=gap.note, offset=offset,
            )
        )  # fmt: skip
    return out


def keyword_offset(spans: Spans, parts: Path | None, keyword: str) -> int | None:
    """Where `keyword` is written in the subschema at `parts`: its key. Some reports name
    the keyword's own value as the path; llguidance's name no path at all (`$`), so those
    point at the first such key in the text."""
    parts = parts or ()
    for candidate in ((*parts, keyword), parts if parts[-1:] == (keyword,) else None):
        span = spans.key(candidate) if candidate else None
        if span is not None:
            return span[0]
    if parts == ():
        firsts = [span[0] for path, span in spans.keys.items() if path[-1:] == (keyword,)]
        if firsts:
            return min(firsts)
    return spans.start_of(parts)


def overconstrained_problems(compiled: CompiledSchema, spans: Spans) -> list[Problem]:
    if compiled.compiler != "llamacpp":
        return []
    out = []
    for parts, node in subschemas(compiled.schema):
        # allOf members are not objects of their own there: their properties are merged.
        if _UNREAD.intersection(keywords_on(parts)) or parts[-2:-1] == ("allOf",):
            continue
        for keyword, reason in _closed(node):
            # At the keyword the converter read the object from (properties or allOf).
            key = spans.key((*parts, "properties" if keyword != "allOf" else "allOf"))
            offset = key[0] if key else spans.start_of(parts)
            line, column = spans.line_col(offset) if offset is not None else (None, None)
            message = f"llama.cpp's converter {reason}"
            out.append(
                Problem(
                    "warning", "overconstrained", message, path_text(parts), line, column,
                    keyword=keyword, reason=reason, offset=offset,
                )
            )  # fmt: skip
    return out


def _closed(node: dict[str, Any]) -> list[tuple[str, str]]:
    used, _ = _used_keywords(node)
    if "properties" in used and "additionalProperties" not in node:
        reason = (
            "refuses keys this object does not list, though `additionalProperties` is left "
            "out (so a validator allows them): a valid output with other keys is refused"
        )
        return [("additionalProperties", reason)]
    if "allOf" in used:
        reason = (
            "merges this allOf's properties into one closed object and makes every one of "
            "them required: valid outputs without them, or with other keys, are refused"
        )
        return [("allOf", reason)]
    return []
