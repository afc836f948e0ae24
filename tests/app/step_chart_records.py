"""Records and a shown chart for the step chart's tests (no model needed)."""

from __future__ import annotations

from app.chart.step_chart import StepChart
from engine.model.tokens import readable_piece
from engine.records import Candidate, Disagreement, StepRecord

CHART_SIZE = (660, 820)  # about the chart pane of the default window


def candidates(texts: tuple[str, ...]) -> tuple[Candidate, ...]:
    """One candidate per text, most probable first; a leading "✗" marks it masked out."""
    return tuple(
        Candidate(
            id=i,
            text=readable_piece(t.lstrip("✗").encode()),  # the display form, "␣" for " "
            p_raw=0.5 / (i + 1),
            p_masked=0.0 if t.startswith("✗") else 0.6 / (i + 1),
            valid=not t.startswith("✗"),
            piece=t.lstrip("✗"),
        )
        for i, t in enumerate(texts)
    )


def make_record(
    step: int,
    texts: tuple[str, ...] = ("a", "b", "✗c"),
    chosen: int = 0,
    valid_mass: float = 0.8,
    disagreement: Disagreement | None = None,
    cands: tuple[Candidate, ...] | None = None,
) -> StepRecord:
    cands = candidates(texts) if cands is None else cands
    return StepRecord(
        step=step,
        token_id=cands[chosen].id,
        token_text=cands[chosen].text,
        token_piece=cands[chosen].piece or "",
        top_raw=cands,
        top_masked=tuple(c for c in cands if c.valid),
        valid_mass=valid_mass,
        valid_mass_bound=0.0,
        n_valid=2,
        n_valid_exact=True,
        entropy=1.0,
        forward_ms=1.0,
        mask_ms=0.1,
        output_chars=step + 1,
        disagreement=disagreement,
    )


def many_candidates(n: int, first_id: int = 0) -> tuple[Candidate, ...]:
    """n allowed candidates with distinct words, probabilities falling off."""
    total = sum(1 / (i + 1) for i in range(n))
    return tuple(
        Candidate(
            id=first_id + i,
            text=f"word{i}",
            p_raw=1 / (i + 1) / total,
            p_masked=1 / (i + 1) / total,
            valid=True,
            piece=f"word{i}",
        )
        for i in range(n)
    )


def shown_chart(qtbot, size: tuple[int, int] = CHART_SIZE) -> StepChart:
    chart = StepChart()
    qtbot.addWidget(chart)
    chart.resize(*size)
    chart.show()
    qtbot.waitExposed(chart)
    return chart
