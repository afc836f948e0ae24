"""Runs through the window with the real model: results, charts, Stop, and closing mid-run."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.main_window import MainWindow
from engine.records import FinishReason, RunResult

RUN_TIMEOUT_MS = 120_000
LONG_STRING = '{"type": "string", "minLength": 400}'


@pytest.mark.slow
def test_currency_run_fills_chart_and_output(window: MainWindow, use_example, run_to_end) -> None:
    use_example(window, "currency", max_tokens=40)
    steps_seen: list[int] = []
    window.controller.sig_step.connect(lambda _r: steps_seen.append(window.status.progress.value()))
    run_to_end(window)

    result = window.last_result
    # The status bar counted tokens against max_tokens during the run, then hid its bar.
    assert steps_seen[-1] == result.n_tokens and window.status.progress.maximum() == 40
    assert not window.status.progress.isVisible()
    assert window.last_error is None
    assert result is not None and result.valid, result
    assert window.output_view.badge.text() == "✓ valid"
    assert window.output_view.pretty.toPlainText().strip().startswith("{")
    assert window.output_view.raw.toPlainText() == result.text

    chart = window.step_chart
    assert len(chart.records) == result.n_tokens > 0
    raw_bars = len(chart.raw_valid_bars.opts["width"]) + len(chart.raw_masked_bars.opts["width"])
    assert raw_bars > 0
    assert len(chart.after_bars.opts["width"]) > 0
    rows = chart.bars.token_axis.rows  # one label per row in view; more scroll into view
    assert rows and len(rows) == len(chart.bars.shown_rows) <= raw_bars
    xs, _ = chart.mass_curve.getData()
    assert len(xs) == result.n_tokens

    # Every step of the finished run can be revisited, and the mass plot follows it.
    chart.slider.setValue(0)
    assert chart.current_line.value() == chart.records[0].step + 1  # steps count from 1
    assert window.run_action.isEnabled() and not window.stop_action.isEnabled()
    assert "tok/s" in window.status.speed_label.text()
    assert window.status.model_label.text().startswith("model: ")


@pytest.mark.slow
def test_stop_cancels_and_window_stays_usable(window: MainWindow, use_example, run_to_end) -> None:
    use_example(window, "person", max_tokens=200)
    window.settings_panel.temperature.setValue(1.0)  # keeps the model talking for a while
    stopped = []

    def stop_on_first_step(_record: object) -> None:
        if not stopped:
            stopped.append(True)
            window.stop_action.trigger()

    window.controller.sig_step.connect(stop_on_first_step)
    run_to_end(window)
    window.controller.sig_step.disconnect(stop_on_first_step)

    result = window.last_result
    assert result is not None, window.last_error
    assert result.finish_reason is FinishReason.CANCELLED
    assert result.n_tokens < 200
    assert "stopped" in window.output_view.badge.text()

    use_example(window, "currency", max_tokens=40)
    run_to_end(window)
    assert window.last_result is not None and window.last_result.valid


def test_close_mid_run_stops_the_worker(qtbot, store, model_cache, use_example) -> None:
    window = MainWindow(store=store, cache=model_cache)
    window.show()
    use_example(window, "person", max_tokens=200)
    # No string closes before 400 characters: the run cannot end by itself before the close.
    loaded = window.schema_editor.text()
    window.schema_editor.set_text(LONG_STRING)
    ended: list[RunResult] = []
    # Caught in the worker thread: once the window has closed, no queued signal reaches it.
    window.controller._worker.sig_finished.connect(ended.append, Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(window.controller.sig_step, timeout=RUN_TIMEOUT_MS):
        assert window.run()
    window.close()  # must stop the run and wait for the worker thread, not crash or hang
    assert not window.controller._thread.isRunning()
    (result,) = ended
    assert result.finish_reason is FinishReason.CANCELLED, result.finish_reason
    assert 0 < result.n_tokens < 200
    # The tests answer Discard to the unsaved-schema question (tests/app/conftest.py): the
    # draft for the next start keeps the schema as loaded, not the discarded edit, and the
    # prompt.
    schema, prompt, _ = store.draft()
    assert schema == loaded
    assert prompt is not None and prompt.strip()


@pytest.mark.slow
def test_saved_run_replays_without_a_model(
    qtbot, window: MainWindow, use_example, run_to_end, tmp_path, store, model_cache
) -> None:
    use_example(window, "currency", max_tokens=40)
    assert not window.save_run_action.isEnabled()
    run_to_end(window)
    path = tmp_path / "run.json"
    assert window.save_run(str(path))

    other = MainWindow(store=store, cache=model_cache)
    qtbot.addWidget(other)
    other.schema_editor.set_text('{"type": "string"}')
    assert other.open_run(str(path))
    assert [r.token_id for r in other.step_chart.records] == [
        r.token_id for r in window.step_chart.records
    ]
    assert other.output_view.raw.toPlainText() == window.last_result.text
    assert other.output_view.badge.text() == "✓ valid"
    # It says how it was made: the model file by name, size and hash, and every setting.
    made = other.current_run().provenance
    assert made is not None and made.model_file == window.model_info.path.split("/")[-1]
    assert len(made.model_sha256) == 64 and made.model_bytes > 100_000_000
    assert made.settings["max_tokens"] == 40 and made.n_vocab == 262_144
    other.undo_action.trigger()  # the schema the replay replaced comes back
    assert other.schema_editor.text() == '{"type": "string"}'

    assert not other.open_run(str(tmp_path / "missing.json"))
    assert "run file not found" in other.last_report
