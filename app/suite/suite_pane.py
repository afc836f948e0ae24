"""The Suite pane: the editor, a Run button with progress, ETA and Cancel, and the results.

A suite runs on the window's worker thread (RunController.start_suite), one job among the
window's own runs, so the model is never used by two at once: while a suite runs, the
window's Run is refused and greyed out, and Cancel stops the suite between two steps,
keeping the samples that finished.

The results can also be a saved result file's (open_result): a sample opened there comes
back from the run cache by its key, and one the cache no longer holds says how to get it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.decoding.worker import RunController, SuiteRequest
from app.suite.editor import SuiteEditor
from app.suite.narrow import CompactButton, FlowRow, FoldingSplitter, WrappingLabel
from app.suite.results_view import ResultRow, ResultsView
from engine.errors import MaskscopeError, SuiteError
from engine.runs.saved import SavedRun
from engine.settings import ModelSettings
from engine.suite.cache import RunCache
from engine.suite.compare import load_result
from engine.suite.format import Suite
from engine.suite.metrics import evaluate, summarise
from engine.suite.run import Progress, SuiteRun
from engine.suite.summary import EXIT_ERROR, summary_to_json
from engine.suite.template import render_prompt

MAX_PARALLEL = 8
PARALLEL_TIP = (
    "How many samples of a case are decoded at once, in one llama.cpp batch, as "
    "`maskscope test --parallel P`. 1 decodes one after another. On a 2-core CPU 8 is the "
    "fastest (2.6–2.9× one at a time in the bench), and 2 or 3 gain little: llama.cpp runs "
    "up to 3 rows one by one (docs/speed.md). From 4 on, a sampled token can differ "
    "slightly from one decoded alone."
)


def eta_text(seconds: float | None) -> str:
    if seconds is None:
        return "ETA: after the first sample"
    seconds = round(seconds)
    if seconds < 60:
        return f"ETA {seconds} s"
    return f"ETA {seconds // 60} min {seconds % 60:02d} s"


class SuitePane(QWidget):
    sig_running = Signal(bool)  # a suite run started (True) or ended (False)
    sig_open = Signal(object, str)  # a sample's SavedRun, to show in the main views; its name

    def __init__(
        self,
        controller: RunController,
        model_settings: Callable[[], ModelSettings],
        model_name: Callable[[], str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.controller = controller
        self._model_settings = model_settings
        self._model_name = model_name
        self.cache: RunCache | None = None  # None: the default folder when "cache" is on
        self.editor = SuiteEditor(self)
        self.results = ResultsView(self)
        self.suite_run: SuiteRun | None = None  # the last run that finished
        self.run_suite_of: Suite | None = None  # the suite that run ran
        self.run_model: ModelSettings | None = None  # and the model it ran on
        self._suite: Suite | None = None  # the suite being run
        self._model: ModelSettings | None = None  # the model it runs on
        self._started = 0.0
        self._build()
        c = controller
        c.sig_suite_progress.connect(self._progress)
        c.sig_suite_finished.connect(self._finished)
        c.sig_suite_error.connect(self._error)
        c.sig_suite_ended.connect(self._ended)
        self.results.sig_open.connect(self.sig_open)
        self.results.sig_open_key.connect(self.open_cached)
        self.results.sig_show_editor.connect(self._unfold_editor)
        self.editor.sig_changed.connect(self._show_planned)
        self.editor.sig_changed.connect(self._unfold_editor)

    def _build(self) -> None:
        self.run_button = CompactButton("Run suite", self)
        self.run_button.setToolTip(
            "Run every case × samples on the model, off the GUI thread (Suite → Run Suite, "
            "Ctrl+Shift+Enter, from any pane)"
        )
        self.run_button.clicked.connect(lambda _c=False: self.run())
        self.cancel_button = CompactButton("Cancel", self)
        self.cancel_button.setToolTip("Stop after the current token; finished samples are kept")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda _c=False: self.cancel())
        self.use_cache = QCheckBox("Reuse cached samples", self)
        self.use_cache.setToolTip(
            "An unchanged sample (same model file, schema, prompt, settings, seed) is read "
            "back instead of decoded again"
        )
        self.use_cache.setChecked(True)
        self.parallel = QSpinBox(self)
        self.parallel.setRange(1, MAX_PARALLEL)
        self.parallel.setToolTip(PARALLEL_TIP)
        parallel_label = QLabel("Parallel sequences:", self)
        parallel_label.setToolTip(PARALLEL_TIP)
        parallel_label.setBuddy(self.parallel)
        self.progress = QProgressBar(self)
        self.progress.setFormat("%v / %m samples")
        self.progress.setValue(0)
        # Under the bar, not beside it: there, in a narrow dock, "Done in 0.1 s, 10 from the
        # cache" took three lines and squeezed the bar's own text onto two. Wrapped: "The
        # model is busy…" would widen the pane past its dock.
        self.eta = WrappingLabel("", self, hide_empty=True)
        bar = QHBoxLayout()
        bar.addWidget(self.run_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.progress, 1)
        # How the run is made, on a row of its own: a narrow pane keeps the bar readable.
        # The two options wrap onto two rows where even that row is too wide (issue 27).
        bottom = QWidget(self)
        options = FlowRow(bottom)
        options.add_widget(self.use_cache)
        parallel_box = QWidget(options)
        parallel_row = QHBoxLayout(parallel_box)
        parallel_row.setContentsMargins(10, 0, 0, 0)
        parallel_row.addWidget(parallel_label)
        parallel_row.addWidget(self.parallel)
        options.add_widget(parallel_box)
        lower = QVBoxLayout(bottom)
        lower.setContentsMargins(0, 0, 0, 0)
        lower.addLayout(bar)
        lower.addWidget(self.eta)
        lower.addWidget(options)
        lower.addWidget(self.results, 1)
        self.splitter = FoldingSplitter(Qt.Orientation.Vertical, self)
        self.splitter.addWidget(self.editor)
        self.splitter.addWidget(bottom)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

    def _show_planned(self) -> None:
        """Before a run, the bar says how many samples Run will make."""
        if not self.running:
            planned = self.editor.cases.rowCount() * self.editor.samples.value()
            self.progress.setRange(0, max(planned, 1))
            self.progress.setValue(0)
            self.progress.setFormat(f"{planned} samples to run" if planned else "no cases")

    @property
    def running(self) -> bool:
        return self._suite is not None

    # --- running ---------------------------------------------------------------------------
    def run(self) -> bool:
        """Start the edited suite; False, saying why, when it cannot be built or the model
        is busy with another run."""
        if self.running or self.controller.running:
            self.eta.setText("The model is busy with another run: stop it first")
            return False
        suite = self.editor.validate()
        if suite is None:
            return False
        if not suite.cases:
            self.editor.message.setText("The suite has no cases to run: add one")
            self.editor.message.show()
            return False
        self._unfold_editor()
        cache = (self.cache or RunCache()) if self.use_cache.isChecked() else None
        request = SuiteRequest(
            suite, self._model_settings(), cache=cache, parallel=self.parallel.value()
        )
        if not self.controller.start_suite(request):
            return False
        self._suite, self._model = suite, request.model
        self._started = time.perf_counter()
        self.suite_run = self.run_suite_of = self.run_model = None
        total = len(suite.cases) * suite.samples
        self.progress.setRange(0, total)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m samples")
        self.eta.setText(eta_text(None))
        self.results.clear(f"Running {total} samples of {suite.name}…")
        self._set_running(True)
        return True

    def cancel(self) -> None:
        if self.running:
            self.controller.stop()
            self.eta.setText("Cancelling after the current token…")

    def _set_running(self, on: bool) -> None:
        self.run_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        self.sig_running.emit(on)

    def hold(self, on: bool, text: str) -> None:
        """Work on the pane's behalf that is not a run (a bundle being written): the bar
        busy with `text`, Run held and the window told, as while a suite runs; there is
        nothing to cancel in it."""
        self.run_button.setEnabled(not on)
        if on:
            self.progress.setRange(0, 0)  # busy: the writing has no steps to count
        else:
            self.progress.setRange(0, max(self.progress.value(), 1))
            self.progress.setValue(self.progress.maximum())
        self.eta.setText(text)
        self.sig_running.emit(on)

    def _progress(self, progress: Progress) -> None:
        if self._suite is None:
            return
        self.progress.setValue(progress.done)
        self.eta.setText(eta_text(progress.eta_s))
        self.results.add(progress.sample, self._run_of(progress))

    def _run_of(self, progress: Progress) -> SavedRun:
        """The sample's run until the worker hands over the saved one (with provenance)."""
        assert self._suite is not None
        case = next(c for c in self._suite.cases if c.id == progress.sample.case_id)
        prompt = render_prompt(self._suite.prompt, case.vars)
        s = progress.sample
        return SavedRun(self._suite.schema_text, prompt, self._model_name(), s.records, s.result)

    def _finished(self, done: SuiteRun) -> None:
        suite = self._suite
        if suite is None:
            return
        self.suite_run, self.run_suite_of, self.run_model = done, suite, self._model
        planned = len(suite.cases) * suite.samples
        summary = summarise(done.samples, wall_s=done.wall_s, n_planned=planned)
        verdict = evaluate(summary, suite.thresholds)
        rows = [ResultRow(s, r) for s, r in zip(done.samples, done.runs, strict=True)]
        self.results.finish(rows, summary, verdict)
        self.progress.setValue(len(done.samples))
        took = f"{done.wall_s:.1f} s"
        cached = f", {done.cached} from the cache" if done.cached else ""
        state = "Cancelled" if done.cancelled else "Done"
        self.eta.setText(f"{state} in {took}{cached}")

    def result_json(self) -> dict[str, Any] | None:
        """The last finished run as `maskscope test --json` writes it; None before one."""
        done, suite = self.suite_run, self.run_suite_of
        if done is None or suite is None:
            return None
        # As `maskscope test` sums a run of one sample after another, so the two compare.
        summary = summarise(done.samples, n_planned=done.planned)
        result = summary_to_json(summary, evaluate(summary, suite.thresholds), suite.name)
        if done.cancelled:
            result["exit_code"] = EXIT_ERROR
        return result

    # --- a saved result ----------------------------------------------------------------------
    def open_result(self, path: str) -> str:
        """Show a `maskscope test --json` result in the results table; "" when shown, else
        why not, in words (a missing, unreadable or foreign file, a suite running)."""
        if self.running:
            return "a suite is running: cancel it or wait for its end first"
        try:
            data = load_result(path)
            self.results.show_result(data, Path(path).name)
        except SuiteError as e:
            return e.message
        except (KeyError, TypeError, ValueError, AttributeError):  # the table stays as it was
            return f"{path} is damaged: its samples are not a test result's"
        self.progress.setRange(0, max(len(self.results.rows), 1))
        self.progress.setValue(len(self.results.rows))
        self.progress.setFormat("%v samples in the result file")
        self.eta.setText("")
        return ""

    def favour_results(self) -> None:
        """A result file's samples are what there is to look at: the editor folds away, and
        the pane asks for no room for it (FoldingSplitter): its summary's "show the suite
        editor", running or opening a suite brings it back, as does its handle where the
        dock has room. Call once the pane shows, when its size is known."""
        self.splitter.setCollapsible(0, True)
        self.splitter.setSizes([0, sum(self.splitter.sizes())])
        self.updateGeometry()

    def _unfold_editor(self) -> None:
        sizes = self.splitter.sizes()
        if sizes and sizes[0] == 0:
            total = sum(sizes)
            self.splitter.setSizes([total * 2 // 3, total - total * 2 // 3])
        self.splitter.setCollapsible(0, False)

    def open_cached(self, key: str, name: str) -> None:
        """A result file's sample: its run from the cache, or why it cannot be shown."""
        if not key:
            self.results.show_notice(
                f"Cannot open {name}: this result file keeps no run keys (it was written "
                "before Maskscope kept them). Run `maskscope test SUITE --json FILE` again "
                "to write one that does; unchanged samples come from the cache."
            )
            return
        try:
            run = (self.cache or RunCache()).get(key)
        except (MaskscopeError, OSError):
            run = None
        if run is None:
            self.results.show_notice(
                f"Cannot open {name}: its run is no longer in the run cache (the cache was "
                "cleared, or the result was made on another machine). Run the suite again "
                "(`maskscope test SUITE`, or Run suite here) to get it back: unchanged "
                "samples come from the cache, this one is decoded again with its seed."
            )
            return
        self.results.show_notice("")
        self.sig_open.emit(run, name)

    def _error(self, kind: str, message: str) -> None:
        self.results.clear("")
        self.editor.message.setStyleSheet("color: #b00020;")
        self.editor.message.setText(f"The suite could not run ({kind}): {message}")
        self.editor.message.show()
        self.eta.setText("Failed")

    def _ended(self) -> None:
        self._suite = None
        self._set_running(False)
