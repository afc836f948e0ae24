"""What changed between two runs: the output diff, the valid mass per step, the first
different choice, and which inputs differ.

Both runs are :class:`engine.runs.saved.SavedRun` values, so a run just made and one read
back from a file compare alike. Steps are counted from 0 here, as in StepRecord.step;
views add 1 when they show a step number.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from engine.records import StepRecord
from engine.runs.saved import SavedRun

# A step's valid mass "moved" when it differs by more than this between the runs.
MASS_SHIFT = 0.1
# Outputs are diffed word by word: a character diff of "USD" against "EUR" matches the
# lone "U" and reads as noise, a model-token diff depends on the tokenizer.
_WORDS = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)


class SpanKind(str, Enum):
    SAME = "same"  # in both outputs
    DELETED = "deleted"  # in the previous output only
    INSERTED = "inserted"  # in the new output only


@dataclass(frozen=True, slots=True)
class DiffSpan:
    """One run of text in the merged diff; offsets index the output that holds it (the
    previous one for DELETED, the new one for SAME and INSERTED)."""

    kind: SpanKind
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class ChosenToken:
    """The token one run chose at a step."""

    token_id: int
    text: str  # display form (␣, \n, <eos>)
    piece: str  # the exact text it appended


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first step at which the runs chose differently; a side is None where that run
    had already ended."""

    step: int
    before: ChosenToken | None
    after: ChosenToken | None


@dataclass(frozen=True, slots=True)
class MassShift:
    step: int
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class RunComparison:
    spans: tuple[DiffSpan, ...]
    mass_before: tuple[float, ...]  # valid mass per step of the previous run
    mass_after: tuple[float, ...]
    shifts: tuple[MassShift, ...]  # steps (in both runs) whose valid mass moved
    divergence: Divergence | None  # None: the same tokens from start to end
    changed_inputs: tuple[str, ...]  # "schema", "prompt", "model", "seed 0 → 1", ...

    @property
    def same_output(self) -> bool:
        return all(s.kind is SpanKind.SAME for s in self.spans)


def compare_runs(before: SavedRun, after: SavedRun, threshold: float = MASS_SHIFT) -> RunComparison:
    mass_before = tuple(r.valid_mass for r in before.records)
    mass_after = tuple(r.valid_mass for r in after.records)
    return RunComparison(
        spans=diff_spans(before.result.text, after.result.text),
        mass_before=mass_before,
        mass_after=mass_after,
        shifts=mass_shifts(mass_before, mass_after, threshold),
        divergence=first_divergence(before.records, after.records),
        changed_inputs=changed_inputs(before, after),
    )


def diff_spans(before: str, after: str) -> tuple[DiffSpan, ...]:
    """The two texts merged into SAME, DELETED and INSERTED runs, in reading order (a
    replaced run reads as its deletion, then its insertion)."""
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    a_at, b_at = _offsets(a), _offsets(b)
    spans: list[DiffSpan] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            spans.append(DiffSpan(SpanKind.SAME, "".join(b[j1:j2]), b_at[j1], b_at[j2]))
            continue
        if i2 > i1:
            spans.append(DiffSpan(SpanKind.DELETED, "".join(a[i1:i2]), a_at[i1], a_at[i2]))
        if j2 > j1:
            spans.append(DiffSpan(SpanKind.INSERTED, "".join(b[j1:j2]), b_at[j1], b_at[j2]))
    return tuple(spans)


def _offsets(words: list[str]) -> list[int]:
    at = [0]
    for w in words:
        at.append(at[-1] + len(w))
    return at


def mass_shifts(
    before: Sequence[float], after: Sequence[float], threshold: float = MASS_SHIFT
) -> tuple[MassShift, ...]:
    return tuple(
        MassShift(i, b, a)
        for i, (b, a) in enumerate(zip(before, after, strict=False))
        if abs(a - b) > threshold
    )


def first_divergence(
    before: Sequence[StepRecord], after: Sequence[StepRecord]
) -> Divergence | None:
    for i, (b, a) in enumerate(zip(before, after, strict=False)):
        if b.token_id != a.token_id:
            return Divergence(i, _choice(b), _choice(a))
    if len(before) == len(after):
        return None
    i = min(len(before), len(after))
    return Divergence(
        i,
        _choice(before[i]) if i < len(before) else None,
        _choice(after[i]) if i < len(after) else None,
    )


def _choice(record: StepRecord) -> ChosenToken:
    return ChosenToken(record.token_id, record.token_text, record.token_piece)


def changed_inputs(before: SavedRun, after: SavedRun) -> tuple[str, ...]:
    """What the user changed between the runs, in words; settings name their values."""
    changed = [
        name
        for name, old, new in (
            ("schema", before.schema_text, after.schema_text),
            ("prompt", before.prompt, after.prompt),
            ("model", before.model, after.model),
        )
        if old != new
    ]
    old_s, new_s = before.result.settings, after.result.settings
    for key in sorted(set(old_s) | set(new_s)):
        if old_s.get(key) != new_s.get(key):
            changed.append(f"{key.replace('_', ' ')} {old_s.get(key)} → {new_s.get(key)}")
    return tuple(changed)


def unified_diff(before: str, after: str) -> str:
    """The outputs as a line diff, for the clipboard."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        "previous run",
        "this run",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
