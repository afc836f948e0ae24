"""One selected step for every view: the slider, the mass plot and the explanation panel
follow it, on a saved run replayed without a model."""

from __future__ import annotations

from pathlib import Path

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
