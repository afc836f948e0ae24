"""The window's spin boxes and the command line accept the same values, from one definition."""

from __future__ import annotations

import argparse

import pytest

from app.settings.panel import SettingsPanel
from engine.settings import MAX_TOKENS, N_GPU_LAYERS, SEED, TEMPERATURE, TOP_K, Range

WIDGETS = [
    ("max_tokens", MAX_TOKENS),
    ("temperature", TEMPERATURE),
    ("seed", SEED),
    ("top_k", TOP_K),
    ("gpu_layers", N_GPU_LAYERS),
]


@pytest.mark.parametrize("name, bounds", WIDGETS)
def test_spin_box_holds_what_the_command_line_accepts(qtbot, name: str, bounds: Range) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    box = getattr(panel, name)
    assert (box.minimum(), box.maximum()) == pytest.approx((bounds.low, bounds.high))
    step = 1 if bounds.kind is int else 0.01
    for value in (bounds.low, bounds.high):
        assert bounds(str(value)) == pytest.approx(value)
    for value in (bounds.low - step, bounds.high + step):
        with pytest.raises(argparse.ArgumentTypeError):
            bounds(str(value))
