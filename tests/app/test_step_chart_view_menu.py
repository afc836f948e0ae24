"""View → Log-scale candidate bars: it switches the chart and is remembered."""

from __future__ import annotations

from app.main_window import MainWindow
from app.settings.store import SettingsStore


def test_bar_log_scale_is_a_view_action_remembered_across_windows(
    qtbot, store: SettingsStore, model_cache
) -> None:
    window = MainWindow(store=store, cache=model_cache)
    qtbot.addWidget(window)
    assert window.bar_log_action in window.view_menu.actions()
    assert not window.step_chart.bars._log
    window.bar_log_action.trigger()
    assert window.step_chart.bars._log
    window.close()  # saves the window's state
    assert store.bar_log_scale()
    again = MainWindow(store=store, cache=model_cache)
    qtbot.addWidget(again)
    assert again.bar_log_action.isChecked() and again.step_chart.bars._log
