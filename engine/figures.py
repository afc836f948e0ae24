"""One way to print a measured number in a text table: three significant-ish digits, whole
numbers from 100 up, and n/a for a value that was not measured."""

from __future__ import annotations


def figure(value: float | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3f}"
