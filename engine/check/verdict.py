"""One instance's verdicts, the grammar's beside jsonschema's, and what explains a difference.

A grammar that accepts an instance jsonschema rejects is explained only when, for every
error jsonschema reports, the compiler itself said it does not enforce that error's keyword
(`error.validator`) on that error's subschema. The subschema is matched by identity: the
compiler's JSON path is walked through the schema and must land on the very node jsonschema
judged by (so a `$ref` followed by jsonschema still matches the path under `$defs`). A path
that leads nowhere in the schema matches on the keyword alone. An error beneath a keyword
the compiler reported (inside an unenforced `items`, past an unenforced `$dynamicRef`) is
explained by that report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError

from engine.grammar.report import Unenforced
from engine.schema.parse import schema_validator

_PART = re.compile(r"""\.([^.\[]+)|\[(\d+)\]|\[(['"])(.*?)\3\]""")
_NOWHERE = object()


@dataclass(frozen=True, slots=True)
class InstanceVerdict:
    """How one instance fared."""

    index: int
    description: str
    text: str  # the instance as written for the grammar
    valid: bool  # jsonschema's verdict
    accepted: bool  # the grammar's verdict
    where: str  # Fed.where: "accepted", or the first rejected character and token
    at: int | None = None  # the character offset in `text` where the grammar refused
    label: bool | None = None  # what the input file says, where it says
    explained_by: tuple[Unenforced, ...] = ()
    errors: tuple[str, ...] = ()  # jsonschema's messages, when it rejects

    @property
    def over_constrained(self) -> bool:
        return self.valid and not self.accepted

    @property
    def unexplained(self) -> bool:
        return not self.valid and self.accepted and not self.explained_by

    @property
    def agrees(self) -> bool:
        return self.valid == self.accepted

    def excerpt(self, width: int = 40) -> str:
        """The written text around where the grammar refused it, the spot marked ⟦here⟧."""
        if self.at is None:
            return _clip(self.text, 2 * width)
        before, after = self.text[: self.at], self.text[self.at :]
        head = before if len(before) <= width else "…" + before[-width:]
        tail = after if len(after) <= width else after[:width] + "…"
        return f"{head}⟦here⟧{tail}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width] + "…"


def schema_errors(instance: Any, schema: Any) -> list[ValidationError]:
    """jsonschema's errors, judged as engine.schema.validate judges (formats asserted)."""
    return list(schema_validator(schema).iter_errors(instance))


def explanation(
    schema: Any, errors: Iterable[ValidationError], gaps: Sequence[Unenforced]
) -> tuple[Unenforced, ...]:
    """The gaps that explain every error, or () when one error has none."""
    nodes = [(gap, _node_at(schema, gap.path)) for gap in gaps]
    used: list[Unenforced] = []
    for error in errors:
        found = _explain(error, nodes) or _beneath(schema, error, nodes)
        if not found:
            return ()
        used += found
    return tuple(dict.fromkeys(used))


def _explain(error: ValidationError, nodes: list[tuple[Unenforced, Any]]) -> list[Unenforced]:
    keyword = error.validator
    if keyword is None:  # a `false` subschema: jsonschema names the keyword it sits under
        parts = [p for p in error.absolute_schema_path if isinstance(p, str)]
        if not parts and error.schema is False:
            # ...except under `then` and `else` (jsonschema 4.26 gives those no path): a
            # reported keyword whose value is `false` explains it
            under = [gap for gap, node in nodes if _value_is_false(node, gap.keyword)]
            if under:
                return under[:1]
        keyword = parts[-1] if parts else "false"
        return [gap for gap, _ in nodes if gap.keyword == keyword][:1]
    # The gap's path names the subschema holding the keyword, or (as some compilers write
    # it) the keyword's own value there.
    own = error.schema.get(keyword) if isinstance(error.schema, dict) else None
    if not isinstance(own, dict | list):  # a number or `true` is no place of its own
        own = _NOWHERE
    for gap, node in nodes:
        if gap.keyword == keyword and (node is _NOWHERE or node is error.schema or node is own):
            return [gap]
    if keyword in ("anyOf", "oneOf") and error.context:
        # Every branch failed; the grammar let the instance through one of them, so that
        # branch's errors must all be explained.
        for branch in _branches(error.context):
            found = [_explain(e, nodes) for e in branch]
            if all(found):
                return [gap for f in found for gap in f]
    return []


def _beneath(
    schema: Any, error: ValidationError, nodes: list[tuple[Unenforced, Any]]
) -> list[Unenforced]:
    """A gap on a keyword the error's schema path passes through: what fails beneath an
    unenforced `items` or `$dynamicRef` is not enforced either."""
    node = schema
    parts = list(error.absolute_schema_path)[:-1]
    for i, part in enumerate(parts):
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            found = [gap for gap, at in nodes if gap.keyword == part and at is node]
            if found:
                return found[:1]
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            # jsonschema's path went through a $ref (it leaves no trace in the path, so the
            # next part is not a key here): past it, a gap on one of the keywords still
            # ahead matches on the keyword alone.
            ahead = {p for p in parts[i:] if isinstance(p, str)}
            found = [
                gap
                for gap, at in nodes
                if gap.keyword in ahead
                and (at is _NOWHERE or (isinstance(at, dict) and gap.keyword in at))
            ]
            return found[:1]
    return []


def _value_is_false(node: Any, keyword: str) -> bool:
    return isinstance(node, dict) and node.get(keyword) is False


def _branches(context: Iterable[ValidationError]) -> list[list[ValidationError]]:
    by_index: dict[Any, list[ValidationError]] = {}
    for error in context:
        head = error.relative_schema_path[0] if error.relative_schema_path else None
        by_index.setdefault(head, []).append(error)
    return list(by_index.values())


def _node_at(schema: Any, path: str) -> Any:
    """The subschema a compiler's JSON path ($.properties.a, $.allOf[0]) names, or _NOWHERE."""
    if not path.startswith("$"):
        return _NOWHERE
    node, rest = schema, path[1:]
    while rest:
        match = _PART.match(rest)
        if match is None:
            return _NOWHERE
        rest = rest[match.end() :]
        key = match.group(1) or match.group(2) or match.group(4)
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return _NOWHERE
    return node
