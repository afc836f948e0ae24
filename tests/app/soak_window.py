"""`python tests/app/soak_window.py ARGS`: the real window (app.main with the same ARGS) that
also writes, to the JSON file named by MASKSCOPE_SOAK_REPORT, where its panes are on screen
and what reached them (tooltips, wheel turns, clicks, steps), for tests/app/test_soak_window.py
which drives it with xdotool under Xvfb. It changes nothing in the window."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QPoint, QTimer
from PySide6.QtWidgets import QApplication, QToolTip, QWidget

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.main import main
from app.main_window import MainWindow

REPORT = Path(os.environ["MASKSCOPE_SOAK_REPORT"])
TICK_MS = 200


def on_screen(widget: QWidget) -> list[int] | None:
    """[x, y, width, height] in screen coordinates, or None when it cannot be seen."""
    if not widget.isVisible():
        return None
    corner = widget.mapToGlobal(QPoint(0, 0))
    return [corner.x(), corner.y(), widget.width(), widget.height()]


class Watch(QObject):
    """Finds the window once it exists, counts what the user's input did, reports it."""

    def __init__(self) -> None:
        super().__init__()
        self.window: MainWindow | None = None
        self.counts = {
            "steps": 0,
            "tooltips": 0,
            "wheel": 0,
            "token_clicks": 0,
            "slider_moves": 0,
            "mass_clicks": 0,
        }
        self.result: dict[str, object] | None = None
        self._tip = False
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def bump(self, name: str) -> None:
        self.counts[name] += 1

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel:
            self.counts["wheel"] += 1
        return False

    def attach(self, w: MainWindow) -> None:
        self.window = w
        w.controller.sig_step.connect(lambda _record: self.bump("steps"))
        w.output_view.sig_step_clicked.connect(lambda _i: self.bump("token_clicks"))
        w.step_chart.slider.actionTriggered.connect(lambda _a: self.bump("slider_moves"))
        w.step_chart.mass.sig_clicked.connect(lambda _i: self.bump("mass_clicks"))
        w.output_view.raw.viewport().installEventFilter(self)
        w.sig_run_ended.connect(self.ended)

    def ended(self) -> None:
        w = self.window
        result = w.last_result if w is not None else None
        if result is not None:
            self.result = {"n_tokens": result.n_tokens, "finish": result.finish_reason.name}
        self.write()

    def tick(self) -> None:
        if self.window is None:
            found = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)]
            if not found:
                return
            self.attach(found[0])
        tip = QToolTip.isVisible()
        self.counts["tooltips"] += int(tip and not self._tip)
        self._tip = tip
        self.write()

    def write(self) -> None:
        w = self.window
        if w is None:
            return
        report = {
            "panes": {
                "text": on_screen(w.output_view.raw.viewport()),
                "bars": on_screen(w.step_chart.bars),
                "mass": on_screen(w.step_chart.mass),
                "slider": on_screen(w.step_chart.slider),
            },
            "counts": self.counts,
            "result": self.result,
        }
        partial = REPORT.with_suffix(".partial")
        partial.write_text(json.dumps(report))
        partial.replace(REPORT)


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])  # app.main uses the instance that exists
    watch = Watch()
    sys.exit(main(sys.argv[1:]))
