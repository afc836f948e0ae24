"""The report's two charts, as hand-written inline SVG: no script and nothing loaded.

Valid mass is drawn as one bar a step, coloured by the step's mark, with the deepest dips
labelled by the token the grammar wrote; raw entropy as a line with a dot a step. Every bar
and dot links to its row in the step table and says its numbers on hover (an SVG title).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.explain.marks import Mark, deepest_dips, mark
from engine.records import StepRecord
from engine.report.escape import escape, tip_token

WIDTH, HEIGHT = 1000, 210
LEFT, RIGHT, TOP, BOTTOM = 46, 14, 18, 30
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
_NICE = (1, 2, 5)
_SLIVER = 3.0
_LABEL_GAP = 150.0  # the least distance between two dip labels' centres


def _frame(label: str, body: str, y_ticks: Sequence[tuple[float, str]], n: int) -> str:
    """The SVG around a chart's marks: horizontal grid lines at y_ticks (as a share of the
    plot's height, 0 at the bottom), and step numbers along the bottom."""
    grid = []
    for share, text in y_ticks:
        y = TOP + PLOT_H * (1 - share)
        grid.append(
            f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        grid.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(text)}</text>')
    for step in _x_ticks(n):
        x = _x_center(step - 1, n)
        grid.append(
            f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{step}</text>'
        )
    base = TOP + PLOT_H
    axis = f'<line class="axis" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{base}" y2="{base}"/>'
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        f"{''.join(grid)}{axis}{body}</svg>"
    )


def _x_ticks(n: int, most: int = 14) -> list[int]:
    """Step numbers (from 1) to label: every 1, 2, 5, 10, 20, ... steps, at most `most`."""
    every = next(m * 10**e for e in range(8) for m in _NICE if math.ceil(n / (m * 10**e)) <= most)
    return [1] + [s for s in range(every, n + 1, every) if s != 1]


def _x_center(index: int, n: int) -> float:
    return LEFT + PLOT_W * (index + 0.5) / n


def _tip(r: StepRecord, what: str) -> str:
    m = mark(r)
    note = "" if m is Mark.FREE else f" · {m.value}"
    return escape(f"step {r.step + 1}: {tip_token(r.token_text, r.token_piece)} · {what}{note}")


def mass_chart(records: Sequence[StepRecord]) -> str:
    """Valid mass per step: a bar each, 0 to 1, coloured free, forced or overruled."""
    n = len(records)
    slot = PLOT_W / n
    bar_w = max(1.0, min(slot * 0.72, 48.0))
    bars = []
    for i, r in enumerate(records):
        # At least a sliver, so that a step whose mass is near 0 still shows its mark's colour.
        h = max(_SLIVER, PLOT_H * max(0.0, min(1.0, r.valid_mass)))
        x = _x_center(i, n) - bar_w / 2
        y = TOP + PLOT_H - h
        tip = _tip(r, f"valid mass {r.valid_mass:.3g}")
        bars.append(
            f'<a href="#step-{r.step + 1}"><rect class="bar {mark(r).value}" x="{x:.1f}" '
            f'y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}">'
            f"<title>{tip}</title></rect></a>"
        )
    placed: list[float] = []
    for dip in deepest_dips(records):
        x = _x_center(next(i for i, r in enumerate(records) if r.step == dip.step), n)
        if any(abs(x - other) < _LABEL_GAP for other in placed):
            continue  # a deeper dip's label is already there: two would overprint
        placed.append(x)
        y = TOP + PLOT_H * (1 - max(0.0, min(1.0, dip.valid_mass))) - _SLIVER - 6
        bars.append(_dip_label(x, y, dip.chosen, dip.wanted))
    ticks = [(v, f"{v:g}") for v in (0, 0.25, 0.5, 0.75, 1)]
    return _frame("valid mass per step", "".join(bars), ticks, n)


def _dip_label(x: float, y: float, chosen: str, wanted: str | None) -> str:
    """The token written, and under it the one the model wanted when that was masked."""
    lines = [f"wrote {chosen}"] if wanted is None else [f"wrote {chosen}", f"wanted {wanted}"]
    spans = "".join(
        f'<tspan x="{x:.1f}" y="{y - 13 * (len(lines) - 1 - i):.1f}">{escape(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return f'<text class="dip" text-anchor="middle">{spans}</text>'


def entropy_chart(records: Sequence[StepRecord]) -> str:
    """Raw entropy (nats) per step: a line, with a dot each coloured by the step's mark."""
    n = len(records)
    top = _nice_ceiling(max((r.entropy for r in records), default=0.0))
    points = [
        (_x_center(i, n), TOP + PLOT_H * (1 - min(r.entropy, top) / top))
        for i, r in enumerate(records)
    ]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    body = [f'<polyline class="line" points="{line}"/>'] if n > 1 else []
    radius = 4.0 if n <= 60 else 2.5
    for (x, y), r in zip(points, records, strict=True):
        tip = _tip(r, f"entropy {r.entropy:.3g} nats")
        body.append(
            f'<a href="#step-{r.step + 1}"><circle class="dot {mark(r).value}" cx="{x:.1f}" '
            f'cy="{y:.1f}" r="{radius}"><title>{tip}</title></circle></a>'
        )
    ticks = [(k / 4, f"{top * k / 4:.3g}") for k in range(5)]
    return _frame("raw entropy per step", "".join(body), ticks, n)


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 4, 5 times a power of ten that is at least value (and > 0)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 4, 5, 10) if m * power >= value)
