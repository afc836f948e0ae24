"""What the workbench reports: problems, each located in the schema text, and their fixes."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")
KINDS = ("syntax", "schema", "grammar", "unenforced", "overconstrained", "lint")


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace text[start:end] with `text`; offsets are characters of the fix's target."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A one-click repair: its edits, applied together as one undoable step.

    `target` says which text the offsets are in: "schema" or "prompt". Edits never overlap.
    """

    label: str
    edits: tuple[TextEdit, ...]
    target: str = "schema"

    def apply(self, text: str) -> str:
        """`text` with every edit made (last first, so the offsets stay right)."""
        for edit in sorted(self.edits, key=lambda e: e.start, reverse=True):
            text = text[: edit.start] + edit.text + text[edit.end :]
        return text


@dataclass(frozen=True, slots=True)
class Problem:
    """One entry of the problems list.

    `path` is the JSON path of the subschema concerned; `line`/`column` (1-based) point at
    the spot in the schema text (the keyword's key for unenforced keywords). `keyword` and
    `reason` are set for unenforced and over-constrained entries: what is not enforced (or
    over-enforced) and why, apart from the full `message`.
    """

    severity: str
    kind: str
    message: str
    path: str
    line: int | None
    column: int | None
    id: str | None = None
    fix: Fix | None = None
    keyword: str | None = None
    reason: str | None = None
    offset: int | None = None  # the character offset line/column stand for

    @property
    def rank(self) -> tuple[bool, int, int]:
        """Errors first, then by place in the text (unplaced ones first)."""
        return (self.severity != "error", self.line or 0, self.column or 0)
