"""Where a probability lies along the candidate bars' axis: linear, or logarithmic.

pyqtgraph's bar item has no log mode, so on the log scale the bars are drawn in decades
(log10 p) from a fixed floor, and the axis is labelled with the probabilities themselves.
The floor is fixed, not fitted to each step, so the axis never moves during a run.
"""

from __future__ import annotations

import numpy as np

LOG_FLOOR_DECADE = -6  # probabilities under 10^-6 draw as empty bars (their tooltip has them)
LEFT_ROOM = 0.02  # of the axis, left of the bars: room for the first tick's label
MARKER_ROOM = 0.09  # of the axis, right of a full bar: room for the sampled-token marker
_DECADE_LABELS = {-6: "10⁻⁶", -5: "10⁻⁵", -4: "10⁻⁴", -3: "0.001", -2: "0.01", -1: "0.1", 0: "1"}


def bar_extent(p: np.ndarray, log: bool) -> np.ndarray:
    """Each bar's length from the axis's start."""
    if not log:
        return p
    decades = np.log10(np.maximum(p, 10.0**LOG_FLOOR_DECADE))
    return decades - LOG_FLOOR_DECADE


def axis_span(log: bool) -> float:
    """The length of a bar for p = 1."""
    return float(-LOG_FLOOR_DECADE) if log else 1.0


def axis_range(log: bool) -> tuple[float, float]:
    span = axis_span(log)
    return -span * LEFT_ROOM, span * (1 + MARKER_ROOM)


def axis_ticks(log: bool) -> list[list[tuple[float, str]]]:
    """Major ticks with labels, then minor ones, in axis coordinates."""
    if log:
        major = [(d - LOG_FLOOR_DECADE, label) for d, label in _DECADE_LABELS.items()]
        return [major, []]
    return [
        [(v / 10, f"{v / 10:.1f}") for v in range(0, 11, 2)],
        [(v / 10, "") for v in range(1, 11, 2)],
    ]
