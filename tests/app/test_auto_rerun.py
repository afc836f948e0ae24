"""Auto-rerun: a valid edit reruns once, an edit mid-run stops that run and reruns after it
ended, and the run shown is the last edit's."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.decoding.auto_rerun import AutoRerun
from engine.records import FinishReason
from engine.runs.compare import SpanKind

if TYPE_CHECKING:
    from app.main_window import MainWindow

RUN_TIMEOUT_MS = 120_000


class FakeController(QObject):
    sig_run_ended = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.stops = 0

    def stop(self) -> None:
        self.stops += 1

    def end_run(self) -> None:
        self.running = False
        self.sig_run_ended.emit()


class Starts:
    def __init__(self, controller: FakeController) -> None:
        self.count = 0
        self._controller = controller

    def __call__(self) -> bool:
        self.count += 1
        self._controller.running = True
        return True


def _rerun(ready: bool = True) -> tuple[AutoRerun, FakeController, Starts]:
    controller = FakeController()
    starts = Starts(controller)
    rerun = AutoRerun(controller, starts, ready=lambda: ready)  # type: ignore[arg-type]
    rerun.set_enabled(True)
    return rerun, controller, starts


def test_a_valid_edit_starts_exactly_one_run():
    rerun, _, starts = _rerun()
    rerun.note_edit()
    rerun.on_checked(True)
    assert starts.count == 1
    rerun.on_checked(True)  # a re-check without an edit (a setting changed) runs nothing
    assert starts.count == 1


def test_invalid_or_stale_checks_and_the_toggle_off_run_nothing():
    rerun, _, starts = _rerun()
    rerun.note_edit()
    rerun.on_checked(False)
    assert starts.count == 0
    stale, _, stale_starts = _rerun(ready=False)
    stale.note_edit()
    stale.on_checked(True)
    assert stale_starts.count == 0
    rerun.set_enabled(False)
    rerun.note_edit()
    rerun.on_checked(True)
    assert starts.count == 0


def test_an_edit_mid_run_stops_it_and_reruns_once_after_it_ended(qtbot):
    rerun, controller, starts = _rerun()
    controller.running = True  # a run in progress
    for _ in range(3):  # three edits before the run has stopped
        rerun.note_edit()
        rerun.on_checked(True)
    assert controller.stops == 1 and starts.count == 0  # never while the old run goes on
    controller.end_run()
    qtbot.waitUntil(lambda: starts.count == 1)
    qtbot.wait(50)
    assert starts.count == 1


def _schema(value: str) -> str:
    return json.dumps(
        {
            "type": "object",
            "properties": {"code": {"type": "string", "enum": [value]}},
            "required": ["code"],
            "additionalProperties": False,
        },
        indent=2,
    )


def _type_schema(window: MainWindow, qtbot, text: str) -> None:
    """Replace the schema as a user edit, and wait for the live check to pass."""
    with qtbot.waitSignal(
        window.schema_editor.sig_grammar_checked,
        check_params_cb=lambda ok: ok,
        timeout=RUN_TIMEOUT_MS,
    ):
        window.schema_editor.set_text(text)


def test_the_window_reruns_on_edit_and_shows_the_last_edits_run(window, qtbot, use_example):
    use_example(window, "currency", max_tokens=12)
    window.auto_rerun_action.setChecked(True)
    assert window.store.auto_rerun()
    starts: list[str] = []
    window.controller.sig_state.connect(
        lambda s: starts.append(s) if s.startswith("Compiling") else None
    )

    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        _type_schema(window, qtbot, _schema("AAA"))
    assert '"AAA"' in window.output_view.result.text
    assert len(starts) == 1

    # A long run, edited twice while it goes on: it stops, and one run follows, for the
    # last edit.
    window.settings_panel.max_tokens.setValue(400)
    finishes = []
    window.controller.sig_finished.connect(lambda r: finishes.append(r.finish_reason))
    # The rerun starts after the window has handled the old run's end: never a "run ended"
    # with the next run already going (Run enabled, Stop greyed out during a run).
    running_at_end: list[bool] = []
    window.sig_run_ended.connect(lambda: running_at_end.append(window.controller.running))
    long_run = {"type": "array", "items": {"type": "integer"}, "minItems": 200}
    with qtbot.waitSignal(window.controller.sig_step, timeout=RUN_TIMEOUT_MS):
        _type_schema(window, qtbot, json.dumps(long_run))
    _type_schema(window, qtbot, _schema("BBB"))
    assert window.controller.running  # both edits come while the long run goes on
    with qtbot.waitSignal(window.sig_run_ended, timeout=RUN_TIMEOUT_MS):
        _type_schema(window, qtbot, _schema("CCC"))
    qtbot.waitUntil(
        lambda: len(finishes) == 2 and not window.controller.running, timeout=RUN_TIMEOUT_MS
    )
    assert finishes == [FinishReason.CANCELLED, FinishReason.GRAMMAR_COMPLETE]
    assert '"CCC"' in window.output_view.result.text
    assert window.schema_editor.text() == _schema("CCC")
    assert len(starts) == 3
    assert running_at_end == [False, False]
    assert window.run_action.isEnabled() and not window.stop_action.isEnabled()
    # Compare shows the last edit's run against the run before the stopped one, which was
    # partial and takes no part.
    cmp = window.compare_view.comparison
    assert cmp is not None and cmp.changed_inputs[0] == "schema"
    deleted = "".join(s.text for s in cmp.spans if s.kind is SpanKind.DELETED)
    inserted = "".join(s.text for s in cmp.spans if s.kind is SpanKind.INSERTED)
    assert "AAA" in deleted and "CCC" in inserted
    qtbot.wait(200)
    assert len(starts) == 3  # nothing more runs after the last edit's run
