"""One selected step for every view: the slider, the mass plot and the explanation panel
follow it, on a saved run replayed without a model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from engine.runs.saved import load_run

RUN = Path(__file__).parent.parent / "data" / "runs" / "currency-logits.json"


def _usd_step(run) -> int:
    text = ""
    for i, r in enumerate(run.records):
        if "".join(text.split()).endswith('"currency":"'):
            return i
        text += r.token_piece
    raise AssertionError("no currency value step")


def test_the_explanation_follows_the_step_the_chart_shows(qtbot, window):
    assert window.open_run(str(RUN))
    window.panes.show_pane("explain")
    run = load_run(RUN)
    index = _usd_step(run)
    window.step_chart.show_step(index)
    panel = window.demo.explanation
    qtbot.waitUntil(lambda: panel.step is not None and panel.step.index == index)
    record = run.records[index]
    assert panel.step.record == record
    assert f"Step {index + 1} of {len(run.records)}" in panel.title.text()
    text = panel.plain_text()
    assert f"{record.valid_mass:.3g}" in text and "USD" in text
    window.step_chart.slider.setValue(0)  # scrubbing moves it too
    qtbot.waitUntil(lambda: panel.step.index == 0)


def test_a_masked_bar_clicked_in_the_chart_is_explained(qtbot, window):
    assert window.open_run(str(RUN))
    run = load_run(RUN)
    index = _usd_step(run)
    masked = next(c for c in run.records[index].top_raw if not c.valid)
    window.step_chart.show_step(index)
    window.step_chart.sig_candidate_clicked.emit(index, masked)
    panel = window.demo.explanation
    assert window.panes.dock("explain").isVisible()
    assert panel.step.index == index and panel.why
    assert "$.currency" in panel.why


def test_a_token_clicked_in_the_output_selects_its_step_everywhere(qtbot, window):
    assert window.open_run(str(RUN))
    window.panes.show_pane("output")
    window.panes.show_pane("explain")
    raw = window.output_view.raw
    qtbot.waitUntil(lambda: raw.isVisible())
    index = _usd_step(load_run(RUN))
    rect = raw.span_rects(*raw.span(index))[0]
    qtbot.mouseClick(raw.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert window.step_chart.slider.value() == index
    panel = window.demo.explanation
    qtbot.waitUntil(lambda: panel.step is not None and panel.step.index == index)
    assert raw.selected == index  # the output marks the step every view shows
    window.step_chart.show_step(0)
    assert raw.selected == 0


def test_the_chart_exports_as_png_and_svg_from_the_file_menu(qtbot, window, tmp_path, monkeypatch):
    assert window.open_run(str(RUN))
    for name in ("chart.png", "chart.svg"):
        out = tmp_path / name
        monkeypatch.setattr("app.demo.plugin.ask_save_path", lambda *a, out=out: str(out))
        window.demo.chart_action.trigger()
        assert out.stat().st_size > 1000
    assert b"<svg" in (tmp_path / "chart.svg").read_bytes()[:2000]
