"""Demonstration mode in the window: its actions, panes and the links between the views.

The window owns running and the views; this adds what a presenter needs on top of them:
Pause / Step / Continue with a delay per token, one selected step that every view follows,
the explanation of that step, "what if" branches, the unconstrained comparison,
presentation mode and the exports. It gets the window's Host API (app/host.py), never the
window itself, and reads the run on screen from the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence

from app.chart.export import FILE_FILTER as CHART_FILTER
from app.chart.export import export_chart
from app.compare.branches import BranchesView
from app.compare.unconstrained import SideBySideView
from app.decoding.freshness import Freshness
from app.demo.branching import Branching
from app.demo.explanation_panel import ExplanationPanel
from app.demo.pacing import Pacing
from app.demo.presentation import Presentation
from app.shell.exports import ask_and_export_report
from app.shell.files import ask_save_path
from engine.errors import MaskscopeError
from engine.records import StepRecord

if TYPE_CHECKING:
    from app.host import Host
    from engine.records import Candidate

EXPLAIN_MS = 120


class Demonstration(QObject):
    def __init__(self, host: Host) -> None:
        super().__init__(host.widget())
        self.host = host
        self._temperature = 0.7  # of the run the views show
        self._add_pacing()
        self.presentation = Presentation(
            host.widget(), host.panes, self.set_plain_language, host.action("stop")
        )
        host.menu("View").addSeparator()
        host.add_action("View", self.presentation.action)
        self.branching = Branching(host)
        self._add_views()
        self._add_actions()

    def _add_pacing(self) -> None:
        h = self.host
        self.pacing = Pacing(
            h.widget(), h.controller, lambda: h.run(paused=True), self.move_selection
        )
        self.pacing.set_delay(h.store.step_delay())
        self.pacing.speed.currentIndexChanged.connect(
            lambda _i: h.store.set_step_delay(self.pacing.delay())
        )
        h.menu("Run").addSeparator()
        self.pacing.add_to(h.menu("Run"), h.toolbar())
        self.pacing.pause_action.toggled.connect(self._paused)
        # After the window's own handler: the worker's "Decoding…" must not hide the pause.
        h.controller.sig_step.connect(self._step_arrived)

    def _add_actions(self) -> None:
        self.unconstrained_action = self._action(
            "Compare with &unconstrained",
            "Ctrl+Shift+U",
            "Run the prompt with the grammar, then with the same seed and no grammar, and "
            "show both side by side",
            self.branching.compare_unconstrained,
        )
        self.host.add_action("Run", self.unconstrained_action)
        self.report_action = self._action(
            "Export &report (HTML)…",
            "Ctrl+Shift+E",
            "Save the run as one HTML file that opens in any browser, with no network",
            self.export_report,
        )
        self.chart_action = self._action(
            "Export &chart (PNG, SVG)…",
            "",
            "Save the chart as it is shown, as a PNG image or SVG",
            self.export_chart,
        )
        for action in (self.report_action, self.chart_action):
            self.host.add_action("File", action, before="Save &run…")

    def _action(self, text: str, keys: str, tip: str, slot: Callable[[], object]) -> QAction:
        action = QAction(text, self)
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    # --- runs ------------------------------------------------------------------------------
    def run_started(self, paused: bool, temperature: float) -> None:
        self._temperature = temperature
        self.pacing.run_started(paused)
        if paused:
            self._paused(True)

    def run_ended(self) -> None:
        self.pacing.run_ended()

    def _step_arrived(self, record: StepRecord) -> None:
        if self.pacing.paused:
            # This slot may run before the window's own, which adds the record to the chart:
            # the count comes from the record itself.
            self._paused(True, record.step + 1)

    def _paused(self, paused: bool, n: int | None = None) -> None:
        if not self.host.controller.running:
            return
        if paused:
            n = len(self.host.session.records) if n is None else n
            self.host.show_status(
                f"Paused after {n} token{'s' if n != 1 else ''}: Space continues, "
                "→ decodes one more",
                0,
            )
        else:
            self.host.show_status("Decoding…", 0)

    def _add_views(self) -> None:
        h, right = self.host, Qt.DockWidgetArea.RightDockWidgetArea
        chart, output = h.views.step_chart, h.views.output_view
        self.explanation = ExplanationPanel(h.widget())
        h.add_pane("explain", "Explanation", self.explanation, right)
        self.explanation.sig_force.connect(self.branching.force)
        # The chart emits the shown step on each redraw, ~30 times a second during a run:
        # the panel follows at most every EXPLAIN_MS, and only while it can be seen.
        self._explain_timer = QTimer(self)
        self._explain_timer.setSingleShot(True)
        self._explain_timer.setInterval(EXPLAIN_MS)
        self._explain_timer.timeout.connect(self._explain_shown)
        chart.sig_step_shown.connect(self._step_shown)
        chart.sig_candidate_clicked.connect(self.candidate_clicked)
        # The timeline: a click on an output token selects its step, and the output marks
        # the token of the step every view shows.
        output.sig_step_clicked.connect(chart.show_step)
        chart.sig_step_shown.connect(output.select_step)
        h.pane("explain").visibilityChanged.connect(lambda _on: self._explain_shown())
        self.branches_view = BranchesView(h.widget())
        self.side_by_side = SideBySideView(h.widget())
        h.add_pane("branches", "Branches", self.branches_view, right)
        h.add_pane("unconstrained", "Unconstrained", self.side_by_side, right)
        b = self.branching
        b.sig_original.connect(self.branches_view.set_original)
        b.sig_branch.connect(self._branch_made)
        b.sig_pair_state.connect(self._pair_state)
        b.sig_pair.connect(self._pair_made)
        b.sig_pair_first.connect(self.side_by_side.show_constrained)
        # The comparison is of the inputs it started with: an edit after it marks it out of
        # date, as the output and chart are (it kept an old comparison with no word).
        self._pair_inputs: dict[str, object] | None = None
        self.pair_freshness = Freshness(self._inputs_now, (self.side_by_side,), self)
        for changed in (
            h.views.schema_editor.editor.textChanged,
            h.views.prompt_pane.editor.textChanged,
            h.views.settings_panel.sig_generation_changed,
        ):
            changed.connect(self.pair_freshness.changed)
        b.sig_unpaced_run.connect(self.pacing.next_run_unpaced)
        self.branches_view.sig_open.connect(lambda run: h.show_run(run, self._name_of(run)))

    def _name_of(self, run: object) -> str:
        """A run of the Branches pane as it is listed there."""
        branches = self.branching.branches
        named = (b.name for b in branches if b.run is run)
        return next(named, "the original run" if run is branches.original else "a saved run")

    def candidate_clicked(self, index: int, candidate: Candidate) -> None:
        """A valid candidate continues the run with it; a masked one is explained. A run
        still under way (paused too) is never ended by a click: a click meant to focus the
        chart forked a paused run and listed it "stopped by user"."""
        if candidate.valid and self.host.controller.running:
            self.host.show_status(
                f"Still running: Stop the run (or let it end), then click {candidate.text!r} "
                f"to continue from step {index + 1} with it",
                8000,
            )
            return
        if candidate.valid:
            self.branching.force(index, candidate.id)
            return
        self.host.show_pane("explain")
        self.host.session.select(index)
        self._explain_shown()
        self.explanation.show_why(candidate)

    def _step_shown(self, _index: int) -> None:
        # The session has the step (the window links the chart to it): only the pace here.
        if not self._explain_timer.isActive():
            self._explain_timer.start()

    def _explain_shown(self) -> None:
        if not self.host.pane("explain").isVisible():
            return
        session = self.host.session
        records = session.records
        if not records:
            self.explanation.clear()
            return
        index = min(session.selected, len(records) - 1)
        n_vocab = session.model_info.n_vocab if session.model_info is not None else None
        schema_text = session.inputs[0]
        self.explanation.show_step(records, index, n_vocab, self._temperature, schema_text)

    def _branch_made(self, branch: object) -> None:
        self.branches_view.add_branch(branch)
        self.host.show_pane("branches")

    def _inputs_now(self) -> dict[str, object]:
        return self.host.inputs_now()

    def _pair_state(self, text: str) -> None:
        if text.startswith("Running with the grammar"):  # the pair's inputs are these
            self._pair_inputs = self._inputs_now()
        if text:
            self.side_by_side.set_running(text)
            self.host.show_pane("unconstrained")
        else:
            self.side_by_side.clear()

    def _pair_made(self, constrained: object, free: object) -> None:
        self.side_by_side.show_pair(constrained, free)
        if self._pair_inputs is not None:
            self.pair_freshness.ran(self._pair_inputs)
        self.host.show_pane("unconstrained")
        self.host.show_status(
            "With and without the grammar, side by side in the Unconstrained pane", 0
        )

    # --- exports ---------------------------------------------------------------------------
    def export_report(self) -> bool:
        h = self.host
        return ask_and_export_report(
            h.widget(),
            h.session.run(),
            lambda path: h.show_status(f"Saved the report to {path}", 5000),
            lambda message: h.report_problem("Cannot export report", message),
        )

    def run_shown(self, temperature: float) -> None:
        """A saved or earlier run is replayed in the views."""
        self._temperature = temperature

    def export_chart(self) -> bool:
        h = self.host
        path = ask_save_path(h.widget(), "Export chart", "chart.png", CHART_FILTER, "png")
        if not path:
            return False
        try:
            export_chart(h.views.step_chart, path)
        except MaskscopeError as e:
            h.report_problem("Cannot export chart", e.message)
            return False
        h.show_status(f"Saved the chart to {path}", 5000)
        return True

    # --- presentation --------------------------------------------------------------------
    def set_plain_language(self, on: bool) -> None:
        """Words for an audience of non-engineers, and the deepest dips annotated."""
        self.explanation.set_plain_language(on)
        self.host.views.step_chart.set_plain_language(on)

    # --- the selected step -----------------------------------------------------------------
    def move_selection(self, delta: int) -> None:
        chart = self.host.views.step_chart
        if not chart.records:
            return
        shown = chart.slider.value()
        chart.show_step(max(0, min(len(chart.records) - 1, shown + delta)))
