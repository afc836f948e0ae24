"""What leaves the app: the HTML report of a run, and the chart as PNG or SVG.

The report is rendered by engine/report from the run's records alone, so it opens in any
browser, with no network and no Maskscope.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QWidget

from app.shell.files import ask_save_path
from engine.errors import MaskscopeError
from engine.report import render_report
from engine.runs.saved import SavedRun, write_atomically

REPORT_FILTER = "HTML report (*.html);;All files (*)"


def export_report(run: SavedRun, path: str) -> None:
    """Write the run's report; MaskscopeError when the file cannot be written (the old
    file, if any, is then left whole)."""
    try:
        write_atomically(Path(path), render_report(run))
    except OSError as exc:
        raise MaskscopeError(f"cannot write report {path}: {exc.strerror or exc}") from None


def ask_and_export_report(
    parent: QWidget,
    run: SavedRun | None,
    done: Callable[[str], None],
    failed: Callable[[str], None],
) -> bool:
    if run is None:
        failed("there is no finished run to report on yet: press Run first")
        return False
    path = ask_save_path(parent, "Export report", "report.html", REPORT_FILTER, "html")
    if not path:
        return False
    try:
        export_report(run, path)
    except MaskscopeError as e:
        failed(e.message)
        return False
    done(path)
    return True
