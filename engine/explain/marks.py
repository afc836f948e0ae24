"""What kind of choice each step was, for the marks the timeline and the report draw.

A step is *forced* when the grammar left exactly one token: the grammar wrote it, not the
model. It is *overruled* when the model's own top choice (the most probable token before
masking) was masked out, so the grammar overrode what the model wanted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from engine.records import Candidate, StepRecord


class Mark(str, Enum):
    FREE = "free"  # the model's top choice was allowed, and so were others
    FORCED = "forced"  # exactly one valid token
    OVERRULED = "overruled"  # the model's top choice was masked out

    @property
    def label(self) -> str:
        return {
            Mark.FREE: "chosen by the model",
            Mark.FORCED: "forced: the grammar allowed only this token",
            Mark.OVERRULED: "overruled: the model's top choice was masked out",
        }[self]


def model_top(record: StepRecord) -> Candidate | None:
    """The model's own first choice: the most probable token before masking."""
    return max(record.top_raw, key=lambda c: c.p_raw, default=None)


def mark(record: StepRecord) -> Mark:
    # Forced wins over overruled: with one valid token the model had no say at all.
    if record.n_valid_exact and record.n_valid == 1:
        return Mark.FORCED
    top = model_top(record)
    if top is not None and not top.valid:
        return Mark.OVERRULED
    return Mark.FREE


@dataclass(frozen=True, slots=True)
class Dip:
    """A step where little of the model's preference survived the mask."""

    step: int
    valid_mass: float
    chosen: str  # display form of the token that was written
    wanted: str | None  # the model's masked top choice, when it was masked


def deepest_dips(records: Sequence[StepRecord], n: int = 3, below: float = 0.5) -> list[Dip]:
    """The n steps with the lowest valid mass under `below`, lowest first."""
    low = sorted((r for r in records if r.valid_mass < below), key=lambda r: r.valid_mass)
    dips = []
    for r in low[:n]:
        top = model_top(r)
        wanted = top.text if top is not None and not top.valid else None
        dips.append(Dip(r.step, r.valid_mass, r.token_text, wanted))
    return dips
