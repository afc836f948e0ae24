"""The run on screen, as one model the views watch (napari's ViewerModel, glue's viewer state).

It holds what the run was started with, its records as they arrive, its result or error and
provenance, the model that made it, the run before it, the step every view shows, and the
known instances of the suite open in the Suite pane. Each change is a signal; the chart and
the output read `records` here and keep no copy (app/main_window.py wires them).
Nothing here draws.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from engine.model.llama import ModelInfo
from engine.records import FinishReason, RunResult, StepRecord
from engine.runs.provenance import Provenance
from engine.runs.saved import SavedRun
from engine.suite.format import Instance


class Session(QObject):
    sig_user_run = Signal()  # the user's own Run starts (not a branch, a pair, a replay)
    sig_ended = Signal()  # a run ended (finished, stopped or failed): Run is possible again
    sig_started = Signal(str)  # a run (or a replay) begins; its subject names it on screen
    sig_record = Signal(object)  # StepRecord: appended to `records`
    sig_replaced = Signal()  # `records` now hold a whole finished run (a replay)
    sig_finished = Signal(object)  # RunResult: the run shown ended (a replay too)
    sig_failed = Signal(str, str)  # kind, message: the run could not start or went wrong
    sig_previous = Signal(object)  # SavedRun: the run the next one is compared with
    sig_selected = Signal(int)  # the step every view shows, as an index into `records`
    sig_model = Signal(object)  # ModelInfo: a model loaded
    sig_suite = Signal()  # the Suite pane's suite changed: its known instances

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.inputs: tuple[str, str] = ("", "")  # (schema text, prompt) of the run shown
        self.records: list[StepRecord] = []  # the one list; views read it
        self.result: RunResult | None = None
        self.error: tuple[str, str] | None = None  # (kind, message) of the last run
        self.provenance: Provenance | None = None
        self.model_name = ""  # the model that made the run shown (or the one loaded)
        self.model_info: ModelInfo | None = None  # of the last model loaded
        self.subject = ""
        self.previous: SavedRun | None = None  # the last run that ended on its own
        self.selected = 0
        self.suite_instances: tuple[Instance, ...] = ()

    # --- a run -----------------------------------------------------------------------------
    def start(self, schema_text: str, prompt: str, subject: str) -> None:
        """A new run on these inputs: the records start empty (the same list, cleared)."""
        self.inputs = (schema_text, prompt)
        self.records.clear()
        self.result, self.error, self.provenance = None, None, None
        self.subject = subject
        self.selected = 0
        self.sig_started.emit(subject)

    def user_run_starting(self) -> None:
        self.sig_user_run.emit()

    def ended(self) -> None:
        self.sig_ended.emit()

    def add(self, record: StepRecord) -> None:
        self.records.append(record)
        self.sig_record.emit(record)

    def set_provenance(self, provenance: Provenance | None) -> None:
        self.provenance = provenance

    def finish(self, result: RunResult) -> None:
        self.result = result
        self.sig_finished.emit(result)

    def fail(self, kind: str, message: str) -> None:
        self.error = (kind, message)
        self.sig_failed.emit(kind, message)

    def forget_result(self) -> None:
        """A run is about to be tried: nothing finished or failed yet."""
        self.result, self.error = None, None

    def replay(self, run: SavedRun, subject: str) -> None:
        """A finished run (saved, a branch, a suite sample) shown whole."""
        self.start(run.schema_text, run.prompt, subject)
        self.records.extend(run.records)
        self.model_name = run.model
        self.provenance = run.provenance
        self.sig_replaced.emit()

    def run(self) -> SavedRun | None:
        """The run shown, once it has ended."""
        if self.result is None:
            return None
        return SavedRun(
            *self.inputs, self.model_name, tuple(self.records), self.result, self.provenance
        )

    def keep_as_previous(self) -> SavedRun | None:
        """The run shown becomes the one the next is compared with, unless it was stopped or
        failed (a partial run takes no part); the one it replaces is returned."""
        if self.result is None or self.result.finish_reason in (
            FinishReason.CANCELLED,
            FinishReason.ERROR,
        ):
            return None
        before = self.previous
        self.previous = SavedRun(*self.inputs, self.model_name, tuple(self.records), self.result)
        self.sig_previous.emit(self.previous)
        return before

    # --- what the views share --------------------------------------------------------------
    def select(self, index: int) -> None:
        self.selected = index
        self.sig_selected.emit(index)

    def model_loaded(self, info: ModelInfo) -> None:
        self.model_info = info
        self.model_name = info.name
        self.sig_model.emit(info)

    def set_suite_instances(self, instances: tuple[Instance, ...]) -> None:
        self.suite_instances = instances
        self.sig_suite.emit()
