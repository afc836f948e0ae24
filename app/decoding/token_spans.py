"""Where each step's token lies in the output text, and how the timeline marks it.

Every step's token is shaded by its step's valid mass (the share of the model's preference
the grammar allowed): unshaded when the grammar left the model almost free, stronger the
more it removed. Forced tokens (the grammar allowed only one) get a dotted grey underline,
tokens where the model's own top choice was masked a red corner mark (drawn by
app/decoding/timeline_text.py), and the selected step an outline in the chart's current-step
colour. Shades come in a few fixed levels, so one char format per level and mark is made
once and reused for every token.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtGui import QColor, QTextCharFormat

from app.glyphs import quoted_token
from engine.explain.marks import Mark, mark, model_top
from engine.records import StepRecord

# Valid mass at or above SHADE_STEPS[0] is not shaded; each step below adds a level.
SHADE_STEPS = (0.9, 0.7, 0.5, 0.3, 0.1)
# Light-to-strong, one colour per level after the first: the valid-mass curve's violet, so
# the text and the strip chart read alike. Black text stays readable on the strongest light
# shade, and light text on the strongest dark one.
LIGHT_RAMP = ("#f0eafb", "#e0d3f7", "#cbb8f0", "#b49be8", "#9a7bde")
DARK_RAMP = ("#2d2742", "#3c3061", "#4c3a80", "#5e43a0", "#7250c4")
LIGHT_FORCED = "#6e6e6e"
DARK_FORCED = "#a0a0a0"
LEGEND_NAME = "share of the model's preference the grammar allowed"


def shade_level(valid_mass: float) -> int:
    """0 (unshaded, mass ≥ 0.9) to len(SHADE_STEPS) (mass < 0.1)."""
    return sum(valid_mass < t for t in SHADE_STEPS)


def qt_length(text: str) -> int:
    """The text's length in QTextDocument positions (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def token_spans(records: Sequence[StepRecord], text: str) -> list[tuple[int, int]]:
    """Each record's [start, end) in `text`, in Python characters.

    The run's output_chars (characters of the output after each step) place tokens in the
    decoded text: a token that splits a UTF-8 character adds its character only once
    complete, so a live concatenation of token pieces and the final text can differ.
    """
    spans, start = [], 0
    for r in records:
        end = min(max(r.output_chars, start), len(text))
        spans.append((start, end))
        start = end
    return spans


def step_tooltip(record: StepRecord, n_steps: int) -> str:
    kind = mark(record)
    # The text keeps the output as it is; the tooltip names a token the fonts cannot draw by
    # its code points (app/glyphs.py).
    token = html.escape(quoted_token(record.token_text, record.token_piece), quote=False)
    lines = [
        f"step <b>{record.step + 1}</b> of {n_steps} · chose <b>{token}</b>",
        f"valid mass <b>{record.valid_mass:.3g}</b> ({LEGEND_NAME})",
        html.escape(kind.label),
    ]
    top = model_top(record)
    if kind is Mark.OVERRULED and top is not None:
        wanted = html.escape(quoted_token(top.text, top.piece), quote=False)
        lines[-1] += f": it wanted <b>{wanted}</b>"
    lines.append("<i>click to show this step in every panel</i>")
    return "<br>".join(lines)


def ramp(dark: bool) -> tuple[str, ...]:
    return DARK_RAMP if dark else LIGHT_RAMP


class TokenFormats:
    """The char format of each (shade level, forced) pair, for one theme."""

    def __init__(self, dark: bool) -> None:
        self.dark = dark
        self._shades = [QColor(c) for c in ramp(dark)]
        self._forced = QColor(DARK_FORCED if dark else LIGHT_FORCED)
        self._cache: dict[tuple[int, bool], QTextCharFormat] = {}

    def plain(self) -> QTextCharFormat:
        return self.get(0, False)

    def of(self, record: StepRecord) -> QTextCharFormat:
        return self.get(shade_level(record.valid_mass), mark(record) is Mark.FORCED)

    def get(self, level: int, forced: bool) -> QTextCharFormat:
        key = (level, forced)
        fmt = self._cache.get(key)
        if fmt is None:
            fmt = QTextCharFormat()
            if level:
                fmt.setBackground(self._shades[level - 1])
            if forced:
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
                fmt.setUnderlineColor(self._forced)
            self._cache[key] = fmt
        return fmt


def legend_html(dark: bool, overruled: QColor, selected: QColor) -> str:
    """Two lines that name the shades and the marks, for under the output."""

    def item(mark_html: str, text: str) -> str:
        return f"<span style='white-space:nowrap'>{mark_html}&nbsp;{text}</span>"

    def swatch(color: str) -> str:
        return f"<span style='background-color:{color}'>&nbsp;&nbsp;&nbsp;</span>"

    bounds = [f"≥ {t:g}" for t in SHADE_STEPS[1:]] + [f"&lt; {SHADE_STEPS[-1]:g}"]
    shades = " ".join(item(swatch(c), b) for c, b in zip(ramp(dark), bounds, strict=True))
    forced = DARK_FORCED if dark else LIGHT_FORCED
    marks = (
        item(
            f"<span style='color:{forced}'>┈┈</span>", "forced: the grammar allowed only this token"
        ),
        item(
            f"<span style='color:{overruled.name()}'>◤</span>",
            "overruled: the model's top choice was masked",
        ),
        item(f"<span style='color:{selected.name()}'>▢</span>", "selected step"),
    )
    return (
        f"<b>shade</b>: {LEGEND_NAME}: unshaded ≥ {SHADE_STEPS[0]:g} {shades}<br>"
        + " &nbsp; ".join(marks)
    )
