"""File > Export report: the shown run as one HTML file, and a clear message when it cannot
be written."""

from __future__ import annotations

from pathlib import Path

from app.shell.exports import export_report
from engine.errors import MaskscopeError
from engine.runs.saved import load_run

RUN = Path(__file__).parent.parent / "data" / "runs" / "currency-logits.json"


def test_the_replayed_run_exports_as_a_report(qtbot, window, tmp_path, monkeypatch):
    assert window.open_run(str(RUN))
    out = tmp_path / "report"
    monkeypatch.setattr("app.shell.exports.ask_save_path", lambda *a: str(out) + ".html")
    assert window.demo.export_report()
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    run = load_run(RUN)
    assert text.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in text
    assert f"{len(run.records)} steps" in text or f"{len(run.records)} tokens" in text


def test_no_run_and_an_unwritable_folder_each_say_why(qtbot, window, tmp_path, monkeypatch):
    window.last_result = None
    assert not window.demo.export_report()
    assert "no finished run" in window.last_report
    # Root may write anywhere, so the unwritable place is a folder that is a file.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file", encoding="utf-8")
    try:
        export_report(load_run(RUN), str(blocker / "report.html"))
    except MaskscopeError as e:
        assert "cannot write report" in e.message
    else:
        raise AssertionError("the report was written inside a file")
    assert blocker.read_text(encoding="utf-8") == "a file"
