"""The run's output as its tokens: each shaded by how little of the model's preference the
rules allowed, underlined when forced or overruled, and linked to its row in the step table."""

from __future__ import annotations

from collections.abc import Sequence

from engine.explain.marks import Mark, mark
from engine.records import StepRecord
from engine.report.escape import escape, tip_token

# The shade's colour (the overruled orange) at full strength: a step whose valid mass is 0.
_SHADE = "224,102,31"
_MOST = 0.55

LEGEND = (
    '<ul class="legend">'
    '<li><span class="swatch shade"></span>shade: how little of the model\'s preference the '
    "rules allowed</li>"
    f'<li><span class="swatch forced"></span>{escape(Mark.FORCED.label)} (the grammar wrote '
    "it, not the model)</li>"
    f'<li><span class="swatch overruled"></span>{escape(Mark.OVERRULED.label)}</li>'
    "</ul>"
)


def output_tokens(records: Sequence[StepRecord], text: str) -> str:
    """The output as linked token spans; the plain text when the tokens do not add up to it
    (a run stopped before its last token was recorded)."""
    if not records or "".join(r.token_piece for r in records) != text:
        return f'<pre class="output">{escape(text)}</pre>'
    spans = "".join(_span(r) for r in records)
    return f'<pre class="output">{spans}</pre>'


def _span(r: StepRecord) -> str:
    m = mark(r)
    alpha = _MOST * (1 - max(0.0, min(1.0, r.valid_mass)))
    note = "" if m is Mark.FREE else f" · {m.value}"
    said = tip_token(r.token_text, r.token_piece)
    tip = f"step {r.step + 1}: {said} · valid mass {r.valid_mass:.3g}{note}"
    return (
        f'<a class="t {m.value}" href="#step-{r.step + 1}" title="{escape(tip)}" '
        f'style="background:rgba({_SHADE},{alpha:.2f})">{escape(r.token_piece)}</a>'
    )
