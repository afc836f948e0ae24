"""An example loaded from the menu brings its own settings, and finishes within them."""

from __future__ import annotations

import dataclasses

import pytest

from app.main_window import MainWindow
from engine.examples import EXAMPLE_ORDER, load_example
from engine.records import FinishReason

FINISHED = (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)


@pytest.mark.slow
def test_invoice_example_brings_the_room_it_needs(window: MainWindow, run_to_end) -> None:
    panel = window.settings_panel
    # Seed 1 at the default temperature writes about 360 tokens: past the default 256.
    panel.set_generation_settings(dataclasses.replace(panel.generation_settings(), seed=1))
    window.load_example(load_example("invoice"))
    assert panel.max_tokens.value() == 1024
    assert panel.seed.value() == 1  # only what the example names is changed
    assert "max tokens 1024" in window.status.currentMessage()
    run_to_end(window)
    result = window.last_result
    assert result.finish_reason in FINISHED, result.n_tokens


def test_each_example_in_the_menu_says_what_it_shows(window: MainWindow) -> None:
    assert list(window.example_actions) == list(EXAMPLE_ORDER)
    for name, action in window.example_actions.items():
        example = load_example(name)
        assert action.text() == example.title
        assert action.toolTip() == action.statusTip() == example.shows
        assert action.parent() is window and action.associatedObjects()[0].toolTipsVisible()
