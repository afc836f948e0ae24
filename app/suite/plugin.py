"""Suites in the window: the Suite pane, the bundled suites in the Examples menu, the
drill-down from a sample to the main views, File > Open Test Result (a saved
`maskscope test --json` result in the pane's table) and the Suite menu (compare two results,
or the last run with one; save the last run's result). Installed by one call,
install_suites(host). It gets the window's Host API (app/host.py), never the window itself,
and keeps the open suite's known instances in the session for the Engines pane.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QWidget

from app.shell.files import ask_save_path
from app.shell.panes import scrolled
from app.suite.compare_view import ResultCompareView
from app.suite.export_bundle import BundleExport
from app.suite.instances_table import InstanceRow
from app.suite.suite_pane import SuitePane
from engine.errors import MaskscopeError
from engine.runs.saved import SavedRun, write_atomically
from engine.schema.parse import parse_schema
from engine.suite.bundled import BUNDLED_SUITES, bundled_suite_path, load_bundled_suite
from engine.suite.compare import compare_results, load_result
from engine.suite.format import Case, Instance, Suite
from engine.suite.load import schema_text_of

if TYPE_CHECKING:
    from app.host import Host

RESULT_FILTER = "Test results (*.json);;All files (*)"
# The generation settings a new suite takes from the window; the rest keep their defaults.
_GENERATION = ("max_tokens", "temperature", "seed", "top_k")


RUN_KEYS = "Ctrl+Shift+Return"
LAYOUT_CHAIN = 6  # layout requests from the verdict up to the dock's scroll area: 4, 2 spare


def suite_title(suite: Suite) -> str:
    """The schema's title without its note in brackets ("Invoice currency"), else the name."""
    title = suite.schema.get("title") if isinstance(suite.schema, dict) else None
    if isinstance(title, str) and title.strip():
        return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip() or title
    return suite.name


class Suites(QObject):
    def __init__(self, host: Host) -> None:
        super().__init__(host.widget())
        self.host = host
        session = host.session
        self.pane = SuitePane(
            host.controller,
            host.views.settings_panel.model_settings,
            lambda: session.model_info.name if session.model_info is not None else "",
            host.widget(),
        )
        # Scrolled: in a small window the pane shrinks below its tables' minimum, and the
        # schema editor above it keeps its room.
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        self.area = scrolled(self.pane)
        host.add_pane("suite", "Suite", self.area, left)
        self.pane.parallel.setValue(host.store.suite_parallel())
        self.pane.parallel.valueChanged.connect(host.store.set_suite_parallel)
        self.pane.sig_open.connect(self.open_sample)
        self.pane.sig_running.connect(self._running)
        editor = self.pane.editor
        editor.sig_changed.connect(
            lambda: session.set_suite_instances(suite_instances(editor.instances.rows))
        )
        self.actions: dict[str, QAction] = {}
        self.bundle_export = BundleExport(host, self.pane)
        self._add_examples()
        self._add_file_actions()
        self._add_suite_menu()
        export = self.actions["export-bundle"]
        self.bundle_export.sig_writing.connect(lambda on: export.setEnabled(not on))
        self.compare_view: ResultCompareView | None = None  # the last comparison shown
        self.new_button = self.pane.editor.add_file_button(
            "New from window",
            self.new_from_window,
            "A new suite with the window's schema, prompt and settings, and one case",
        )

    def _add_examples(self) -> None:
        menu = self.host.menu("Examples")
        menu.addSeparator()
        for name in BUNDLED_SUITES:
            try:
                suite = load_bundled_suite(name)
                title, tip = suite_title(suite), suite.description
            except MaskscopeError as e:  # a broken install: the entry says why it fails
                title, tip = name, e.message
            action = QAction(f"Suite: {title}", self)
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.triggered.connect(lambda _c=False, n=name: self.open_bundled(n))
            menu.addAction(action)
            self.actions[name] = action

    def _add_file_actions(self) -> None:
        """Beside File > Open run: a test result opened for a look, and the bundle."""
        after = "Open r&un…"
        for key, text, slot, tip in (
            ("open-result", "Open &Test Result…", self.open_result_dialog,
             "Show a saved `maskscope test --json` result in the Suite pane; open its samples"),
            ("export-bundle", "Export &Bundle…", self.bundle_export.dialog,
             "Test the Suite pane's suite (or take its last run) and write the bundle to ship: "
             "schema, tested grammar, reports, snippets, hashes"),
        ):  # fmt: skip
            action = QAction(text, self)
            action.setStatusTip(tip)
            action.setToolTip(tip)
            action.triggered.connect(lambda _c=False, f=slot: f())
            self.host.add_action("File", action, after=after)
            after = action.text()
            self.actions[key] = action

    def _add_suite_menu(self) -> None:
        """Suite, before Help: what works on test results rather than on the schema."""
        menu = self.host.menu("&Suite")
        self.suite_menu = menu
        # The pane's Run button sits under the suite editor, out of view in a short dock.
        for key, text, slot, keys, tip in (
            ("run", "&Run Suite", self.run_suite, RUN_KEYS,
             "Run every case × samples of the Suite pane's suite, off the GUI thread"),
            ("cancel", "Ca&ncel Suite Run", self.pane.cancel, "",
             "Stop the suite after the current token; finished samples are kept"),
        ):  # fmt: skip
            action = QAction(text, self)
            action.setShortcut(keys)
            action.setStatusTip(tip)
            action.setToolTip(tip)
            action.triggered.connect(lambda _c=False, f=slot: f())
            menu.addAction(action)
            self.actions[key] = action
        menu.addSeparator()
        for key, text, slot, tip in (
            ("compare", "&Compare Test Results…", self.compare_dialog,
             "Two saved results side by side, per case, regressions first"),
            ("compare-last", "Compare &Last Run with a Result…", self.compare_last_run_dialog,
             "The Suite pane's last run against a saved result (as the first, the before)"),
            ("save-result", "&Save Test Result…", self.save_result_dialog,
             "Save the last run's result as `maskscope test --json` writes it"),
        ):  # fmt: skip
            action = QAction(text, self)
            action.setStatusTip(tip)
            action.setToolTip(tip)
            action.triggered.connect(lambda _c=False, f=slot: f())
            menu.addAction(action)
            self.actions[key] = action
        menu.aboutToShow.connect(self._enable_suite_menu)
        self._enable_suite_menu()

    def _enable_suite_menu(self) -> None:
        self.actions["cancel"].setEnabled(self.pane.running)
        has_run = self.pane.suite_run is not None
        self.actions["compare-last"].setEnabled(has_run)
        self.actions["save-result"].setEnabled(has_run)

    # --- what the menu and the pane do -----------------------------------------------------
    def run_suite(self) -> bool:
        """Suite > Run Suite: the pane brought to the front with its run bar in view (where
        it says why a suite cannot run), then its Run."""
        self.host.show_pane("suite")
        self.area.ensureWidgetVisible(self.pane.progress)
        return self.pane.run()

    def open_bundled(self, name: str) -> bool:
        """Open a bundled suite in the Suite pane; Save then asks for a file of one's own."""
        if not self.pane.editor.may_discard():
            return False
        try:
            suite = load_bundled_suite(name)
        except MaskscopeError as e:
            self.host.report_problem("Cannot open the suite", e.message)
            return False
        self.pane.editor.set_suite(suite, str(bundled_suite_path(name)), read_only=True)
        self.host.show_pane("suite")
        self.host.show_status(f"Opened the example suite {suite.name}", 5000)
        return True

    def new_from_window(self) -> bool:
        """A suite of the playground's schema, prompt and generation settings: the start of
        a test for what was just tried out. Put {{name}} in its prompt to add variables."""
        h, views, editor = self.host, self.host.views, self.pane.editor
        if not editor.may_discard("making a new suite"):
            return False
        try:
            schema_text = schema_text_of(parse_schema(views.schema_editor.text()))
        except MaskscopeError as e:
            h.report_problem("Cannot make a suite of this schema", e.message)
            return False
        settings = views.settings_panel.generation_settings()
        suite = Suite(
            name="suite",
            schema_text=schema_text,
            prompt=views.prompt_pane.text(),
            cases=(Case("case-1", {}),),
            compiler=settings.compiler,
            backend=settings.backend,
            generation={k: getattr(settings, k) for k in _GENERATION},
        )
        editor.set_suite(suite, None)
        h.show_pane("suite")
        return True

    def open_result_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.host.widget(), "Open test result", "", RESULT_FILTER
        )
        if path:
            self.open_result(path)

    def open_result(self, path: str) -> bool:
        """A saved test result in the Suite pane's table; a file that is none says why."""
        problem = self.pane.open_result(path)
        if problem:
            self.host.report_problem("Cannot open the test result", problem)
            return False
        self.host.show_pane("suite")
        self.pane.favour_results()
        self.host.show_status(
            f"Opened the test result {path}: double-click a sample to see its run", 0
        )
        return True

    def _pick_result(self, title: str) -> str:
        path, _ = QFileDialog.getOpenFileName(self.host.widget(), title, "", RESULT_FILTER)
        return path

    def compare_dialog(self) -> bool:
        first = self._pick_result("Compare test results: the first (before)")
        second = self._pick_result("Compare test results: the second (after)") if first else ""
        return bool(second) and self.compare_files(first, second)

    def compare_files(self, first: str, second: str) -> bool:
        """Two result files compared in a window; a file that is no result says why."""
        a = self._result_to_compare(first)
        b = None if a is None else self._result_to_compare(second)
        if a is None or b is None:
            return False
        return self.show_comparison(a, b, (Path(first).name, Path(second).name))

    def _result_to_compare(self, path: str) -> dict[str, Any] | None:
        """The saved result, or None once the banner says why it cannot be read."""
        try:
            return load_result(path)
        except MaskscopeError as e:
            self.host.report_problem("Cannot compare the test results", e.message)
            return None

    def compare_last_run_dialog(self) -> bool:
        path = self._pick_result("Compare the last run with a saved result")
        return bool(path) and self.compare_last_run(path)

    def compare_last_run(self, path: str) -> bool:
        """The saved result as the first (before), the pane's last run as the second."""
        current = self.pane.result_json()
        if current is None:
            self.host.report_problem("Nothing to compare", "run the suite first")
            return False
        saved = self._result_to_compare(path)
        if saved is None:
            return False
        name = f"this run of {current['suite'] or 'the suite'}"
        return self.show_comparison(saved, current, (Path(path).name, name))

    def show_comparison(self, a: dict[str, Any], b: dict[str, Any], names: tuple[str, str]) -> bool:
        try:
            comparison = compare_results(a, b, names)
        except (KeyError, TypeError, ValueError, AttributeError):
            self.host.report_problem(
                "Cannot compare the test results", "a result file is damaged: its cases or "
                "samples are not a test result's"
            )  # fmt: skip
            return False
        if self.compare_view is not None:
            self.compare_view.close()
        self.compare_view = ResultCompareView(comparison, self.host.widget())
        self.compare_view.show()
        word = "regressions" if comparison.regressed else "no regressions"
        self.host.show_status(f"Compared {names[0]} → {names[1]}: {word}", 0)
        return True

    def save_result_dialog(self) -> bool:
        path = ask_save_path(self.host.widget(), "Save test result", "result.json", RESULT_FILTER)
        return bool(path) and self.save_result(path)

    def save_result(self, path: str) -> bool:
        result = self.pane.result_json()
        if result is None:
            self.host.report_problem("Nothing to save", "run the suite first")
            return False
        try:
            write_atomically(Path(path), json.dumps(result, ensure_ascii=False, indent=1) + "\n")
        except OSError as e:
            self.host.report_problem("Cannot save the test result", f"{path}: {e.strerror or e}")
            return False
        self.host.show_status(f"Saved the test result to {path}", 5000)
        return True

    def open_sample(self, run: SavedRun, name: str = "") -> None:
        """A sample's run in the chart, output and timeline (the editors stay as they are)."""
        source = self.pane.results.source
        title = self.pane.editor.title_name
        suite = f"the result file {source}" if source else f"the suite {title}"
        shown = f"{name} of {suite}" if name else f"a sample of {suite}"
        self.host.show_run(run, shown)
        self.host.show_pane("chart")
        self.host.show_status(f"Showing {shown} in the chart and output", 0)

    def _running(self, on: bool) -> None:
        # The window's own Run would be refused while the model serves the suite, and an
        # automatic rerun after a schema edit would stop the suite: both wait for its end.
        self.host.hold_runs(on)
        if not on:  # the worker's last word was "Running the suite…"
            self.host.show_status(f"Suite {self.pane.editor.title_name}: {self.pane.eta.text()}")
            self._show_verdict()

    def _show_verdict(self) -> None:
        """At a run's end, the verdict under the run bar scrolled into view in a short dock,
        the bar kept in view; only when the bar is in view (the user may be up in the cases).
        The verdict just set reaches the scroll area through a chain of layout requests, each
        posted by the one before (label, results, splitter, pane): _scroll_to sends them
        first, so that the scroll reaches the verdict at its full length."""
        if not self.pane.progress.visibleRegion().isEmpty():
            self._scroll_to(self.pane.results.summary, self.pane.progress)

    def _scroll_to(self, *widgets: QWidget) -> None:
        """Each widget in turn scrolled into view, once what just changed is laid out."""
        for _ in range(LAYOUT_CHAIN):
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        for widget in widgets:
            self.area.ensureWidgetVisible(widget, 0, 0)


def suite_instances(rows: list[InstanceRow]) -> tuple[Instance, ...]:
    """The Instances tab's rows as the suite file will hold them: JSON data, or raw text."""
    out = []
    for row in rows:
        found = row.to_json()
        out.append(Instance(found["valid"], found.get("data"), found.get("text"), row.description))
    return tuple(out)


def install_suites(host: Host) -> Suites:
    return Suites(host)
