"""The main window: composes the views, owns the actions, and routes worker signals.

Layout: dock panes (app/shell/panes.py), by default schema editor over prompt | step
charts | settings over output.
Nothing here touches the model; runs go through :class:`app.decoding.worker.RunController`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMenu,
    QStyle,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.banner import ErrorBanner
from app.chart.step_chart import StepChart
from app.compare.previous import CompareView
from app.decoding.auto_rerun import AutoRerun, make_toggle
from app.decoding.output_view import OutputView, verdict
from app.decoding.worker import ModelCache, RunController, RunRequest
from app.demo.plugin import Demonstration
from app.engines.plugin import install_engines
from app.session import Session
from app.settings.panel import SettingsPanel
from app.settings.store import SettingsStore
from app.shell.about import AboutDialog
from app.shell.crash_restore import CrashRestore, RestoreBanner
from app.shell.edit_menu import EditActions
from app.shell.files import Unsaved, ask_save_path
from app.shell.panes import PaneHost, scrolled
from app.shell.routing import Routing
from app.shell.schema_files import SchemaFiles
from app.shell.shortcuts import ShortcutsDialog
from app.shell.window_size import fit_to_screen
from app.status import StatusBar
from app.suite.editor import SuiteEditor
from app.suite.plugin import install_suites
from app.views import Views
from app.workbench.grammar_view import GrammarView, follow_editor
from app.workbench.prompt_pane import PromptPane
from app.workbench.schema_editor import SchemaEditor
from engine.errors import MaskscopeError
from engine.examples import examples
from engine.model.llama import ModelInfo
from engine.model.paths import DEFAULT_MODEL_FILE
from engine.records import RunResult, StepRecord
from engine.runs.provenance import Provenance
from engine.runs.saved import SavedRun, load_run, run_settings, save_run
from engine.schema.parse import parse_schema
from engine.settings import GenerationSettings, ModelSettings

RUN_FILTER = "Maskscope run (*.json);;All files (*)"
YOUR_RUN = "your run"  # a run of the editors' schema and prompt
PANES_KEY = "panes"
CHART_SPLITTER_KEY = "chart_splitter"
OLD_SPLITTER_KEYS = ("main_splitter", "left_splitter", "right_splitter")


class MainWindow(SchemaFiles, QMainWindow):  # file methods: app/shell/schema_files.py
    """The one Host (app/host.py) of the window's features; the run on screen is
    `session` (app/session.py), which the chart and the output read."""

    sig_run_ended = Signal()  # a run finished, was stopped, or failed; Run is enabled again

    def __init__(
        self,
        store: SettingsStore | None = None,
        cache: ModelCache | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store if store is not None else SettingsStore()
        self.controller = RunController(cache, self)
        self.session = Session(self)
        self.current_path: str | None = None
        self.schema_root: str | None = None  # the folder opened: $ref'd files stay inside it
        self.current_example: str | None = None  # the title of the example loaded, if any
        self.last_report = ""  # the last message shown in the banner
        # (schema, prompt) as the command line left them; quitting with these unedited
        # keeps the stored draft (see keep_saved_draft).
        self._draft_baseline: tuple[str, str] | None = None

        self.schema_editor = SchemaEditor(self)
        self.prompt_pane = PromptPane(self)
        self.settings_panel = SettingsPanel(self)
        self.step_chart = StepChart(self, self.session.records)
        self.output_view = OutputView(self, self.session.records)
        self.views = Views(
            self.schema_editor,
            self.prompt_pane,
            self.settings_panel,
            self.step_chart,
            self.output_view,
        )
        self.compare_view = CompareView(self)
        self.auto_rerun = AutoRerun(self.controller, self.run, self.schema_editor.is_current, self)
        self.banner = ErrorBanner(self)
        self.status = StatusBar(self)
        self.setStatusBar(self.status)
        self._build_layout()
        self.setAcceptDrops(True)  # a .json schema dropped anywhere opens
        self._build_actions()
        self._connect()
        self._restore()
        self.track_saved_schema()  # what Discard goes back to (app/shell/schema_files.py)
        self.crash_restore = CrashRestore(self, self.restore_banner)
        self.crash_restore.offer()
        # Load the model once the event loop runs, after the CLI has applied --model.
        QTimer.singleShot(0, self._preload_model)

    # --- construction ----------------------------------------------------------------------
    def _build_layout(self) -> None:
        self.panes = PaneHost(self)
        self.view_menu = QMenu("&View", self)  # pane toggles first, then the view options
        self._panes_end = self.view_menu.addSeparator()
        self.settings_scroll = scrolled(self.settings_panel)  # shrinks in a small window
        for name, title, widget, area in (
            ("schema", "JSON Schema", self.schema_editor, Qt.DockWidgetArea.LeftDockWidgetArea),
            ("prompt", "Prompt", self.prompt_pane, Qt.DockWidgetArea.LeftDockWidgetArea),
            ("chart", "Chart", self.step_chart, Qt.DockWidgetArea.RightDockWidgetArea),
            ("settings", "Settings", self.settings_scroll, Qt.DockWidgetArea.RightDockWidgetArea),
            ("output", "Output", self.output_view, Qt.DockWidgetArea.RightDockWidgetArea),
            ("compare", "Compare", self.compare_view, Qt.DockWidgetArea.RightDockWidgetArea),
        ):
            self.add_pane(name, title, widget, area)
        # Under the schema editor, tabbed with the prompt: every problem of the schema.
        problems = self.schema_editor.problems_list
        self.add_pane("problems", "Problems", problems, Qt.DockWidgetArea.LeftDockWidgetArea)
        # Under it too: the grammar the backend runs, selected in step with the schema.
        self.grammar_view = GrammarView(self)
        follow_editor(self.grammar_view, self.schema_editor)
        self.add_pane("grammar", "Grammar", self.grammar_view, Qt.DockWidgetArea.LeftDockWidgetArea)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.banner)
        self.restore_banner = RestoreBanner(self)  # after a crash: Restore / Discard
        layout.addWidget(self.restore_banner)
        layout.addWidget(self.panes, 1)
        self.setCentralWidget(central)
        fit_to_screen(self)

    def add_pane(
        self,
        name: str,
        title: str,
        widget: QWidget,
        area: Qt.DockWidgetArea,
        tab_with: str | None = None,
    ) -> QDockWidget:
        """Add a dock pane, listed in View. By default a left pane is tabbed with the prompt
        (under the schema editor) and a right one with the output; `tab_with` names another
        pane to share tabs with."""
        dock = self.panes.add_pane(name, title, widget, area, tab_with)
        self.view_menu.insertAction(self._panes_end, dock.toggleViewAction())
        return dock

    # --- the Host API (app/host.py) that the window's features get -----------------------
    def widget(self) -> QMainWindow:
        return self

    def show_pane(self, name: str) -> None:
        self.panes.show_pane(name)

    def pane(self, name: str) -> QDockWidget:
        return self.panes.dock(name)

    def menu(self, title: str) -> QMenu:
        bar = self.menuBar()
        entries = bar.actions()
        plain = title.replace("&", "")
        for entry in entries:
            if isinstance(entry.menu(), QMenu) and entry.text().replace("&", "") == plain:
                return entry.menu()
        made = QMenu(title, self)
        made.setToolTipsVisible(True)
        help_entry = next((e for e in entries if e.text() == "&Help"), None)
        if help_entry is not None:
            bar.insertMenu(help_entry, made)
        else:
            bar.addMenu(made)
        return made

    def add_action(self, menu: str, action: QAction, before: str = "", after: str = "") -> None:
        into = self.menu(menu)
        entries = into.actions()
        texts = [e.text() for e in entries]
        at = texts.index(before) if before in texts else None
        if at is None and after in texts and texts.index(after) + 1 < len(entries):
            at = texts.index(after) + 1
        if at is None:
            into.addAction(action)
        else:
            into.insertAction(entries[at], action)

    def action(self, name: str) -> QAction:
        return {"run": self.run_action, "stop": self.stop_action}[name]

    def toolbar(self) -> QToolBar:
        return self.run_toolbar

    def show_status(self, text: str, ms: int = 0) -> None:
        self.status.showMessage(text, ms)

    def hold_runs(self, held: bool) -> None:
        self.run_action.setEnabled(not held)
        self.auto_rerun.set_enabled(not held and self.auto_rerun_action.isChecked())

    def inputs_now(self) -> dict[str, object]:
        return self.routing.inputs_now()

    def suite_state(self) -> SuiteEditor:
        """The Suite pane's editor, whose work crash recovery keeps."""
        return self.suites.pane.editor

    def _action(
        self, text: str, slot: object, shortcut: QKeySequence | str | None = None, tip: str = ""
    ) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        style = self.style()
        menu = self.menuBar()

        file_menu = menu.addMenu("&File")
        self.file_menu = file_menu
        file_menu.addAction(
            self._action(
                "&New schema",
                self.new_schema,
                QKeySequence.StandardKey.New,
                tip="An empty object schema and an empty prompt (Undo brings the old ones back)",
            )
        )
        file_menu.addAction(
            self._action("&Open schema…", self.open_schema_dialog, QKeySequence.StandardKey.Open)
        )
        file_menu.addAction(
            self._action("&Save schema", self.save_schema, QKeySequence.StandardKey.Save)
        )
        file_menu.addAction(
            self._action("Save schema &as…", self.save_schema_as, QKeySequence.StandardKey.SaveAs)
        )
        self.recent_menu = file_menu.addMenu("&Recent files")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self._action("Open &prompt…", self.open_prompt_dialog))
        file_menu.addAction(self._action("Save prompt a&s…", self.save_prompt_as))
        file_menu.addSeparator()
        self.save_run_action = self._action(
            "Save &run…",
            self.save_run_dialog,
            "Ctrl+Shift+R",
            tip="Save the last run's steps and result, to replay them without a model",
        )
        self.save_run_action.setEnabled(False)
        file_menu.addAction(self.save_run_action)
        file_menu.addAction(
            self._action(
                "Open r&un…",
                self.open_run_dialog,
                "Ctrl+Shift+O",
                tip="Replay a saved run in the chart and output views",
            )
        )
        file_menu.addSeparator()
        file_menu.addAction(
            self._action(
                "Open &model (GGUF)…",
                self.settings_panel.browse_model,
                tip="Choose the GGUF model file to decode with",
            )
        )
        file_menu.addSeparator()
        file_menu.addAction(self._action("&Quit", self.close, QKeySequence.StandardKey.Quit))

        self.edit_actions = EditActions(
            self,
            menu.addMenu("&Edit"),
            self.schema_editor,
            self.prompt_pane,
            lambda message: self.status.showMessage(message, 5000),
        )
        self.undo_action, self.redo_action = self.edit_actions.undo, self.edit_actions.redo

        examples_menu = menu.addMenu("E&xamples")
        examples_menu.setToolTipsVisible(True)  # each tooltip says what its example shows
        self.example_actions: dict[str, QAction] = {}
        for example in examples():
            action = self._action(
                example.title,
                lambda _=False, ex=example: self.load_example(ex),
                tip=example.shows,
            )
            examples_menu.addAction(action)
            self.example_actions[example.name] = action

        run_menu = menu.addMenu("&Run")
        self.run_action = self._action(
            "&Run", self.run, "Ctrl+Return", "Decode the prompt under the schema (Ctrl+Enter)"
        )
        self.run_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_MediaPlay))
        self.stop_action = self._action(
            "&Stop", self.stop, "Esc", "Stop after the current token (Esc)"
        )
        self.stop_action.setIcon(style.standardIcon(QStyle.StandardPixmap.SP_MediaStop))
        self.stop_action.setEnabled(False)
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.stop_action)
        self.run_menu = run_menu
        run_menu.addSeparator()
        self.auto_rerun_action = make_toggle(self)
        run_menu.addAction(self.auto_rerun_action)

        menu.addMenu(self.view_menu)
        view_menu = self.view_menu
        view_menu.addAction(
            self._action(
                "Reset &layout",
                self.panes.reset_layout,
                tip="Put every pane back in its default place, and show the hidden ones",
            )
        )
        view_menu.addSeparator()
        self.log_action = self._action(
            "&Log-scale valid mass",
            self.step_chart.set_log_scale,
            tip="Show the valid-mass plot on a logarithmic axis",
        )
        self.log_action.setCheckable(True)
        view_menu.addAction(self.log_action)
        self.bar_log_action = self._action(
            "Log-scale &candidate bars",
            self.step_chart.set_bar_log_scale,
            tip="Show the candidate bars on a logarithmic axis, where small probabilities show",
        )
        self.bar_log_action.setCheckable(True)
        view_menu.addAction(self.bar_log_action)

        help_menu = menu.addMenu("&Help")
        help_menu.addAction(
            self._action(
                "&Keyboard Shortcuts",
                lambda: ShortcutsDialog(self.menuBar(), self).exec(),
                QKeySequence.StandardKey.HelpContents,
                tip="Every menu command that has keys (F1)",
            )
        )
        help_menu.addAction(self._action("&About Maskscope", self._about))

        toolbar = QToolBar("Run", self)
        toolbar.setObjectName("runToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.addAction(self.run_action)
        toolbar.addAction(self.stop_action)
        toolbar.addAction(self.auto_rerun_action)
        toolbar.addSeparator()
        toolbar.addAction(self.log_action)
        self.addToolBar(toolbar)
        self.run_toolbar = toolbar
        self.demo = Demonstration(self)  # app/demo/plugin.py: its actions, panes, links
        self.suites = install_suites(self)  # app/suite/plugin.py: the Suite pane, examples
        self.engines = install_engines(self)  # app/engines/plugin.py: the Engines pane

    def _watch_session(self) -> None:
        """The views follow the run on screen; the records stay the session's."""
        s = self.session
        s.sig_started.connect(self._run_shown)
        s.sig_record.connect(self.step_chart.push)
        s.sig_record.connect(self.output_view.append_record)
        s.sig_record.connect(lambda _record: self.status.step())
        s.sig_replaced.connect(self.step_chart.refresh)
        self.step_chart.sig_step_shown.connect(s.select)  # the step every view follows

    def _run_shown(self, subject: str) -> None:
        self.show_subject(subject)
        self.step_chart.clear()
        self.output_view.start_run()

    def _connect(self) -> None:
        self._watch_session()
        c = self.controller
        c.sig_state.connect(self.status.showMessage)
        c.sig_model_loaded.connect(self._on_model_loaded)
        c.sig_step.connect(self._on_step)
        c.sig_provenance.connect(self._on_provenance)
        c.sig_finished.connect(self._on_finished)
        c.sig_error.connect(self._on_error)
        c.sig_run_ended.connect(self._on_run_ended)
        self.settings_panel.sig_model_changed.connect(self._model_chosen)
        self.auto_rerun_action.toggled.connect(self.auto_rerun.set_enabled)
        self.auto_rerun_action.toggled.connect(self.store.set_auto_rerun)
        self.schema_editor.editor.textChanged.connect(self.auto_rerun.note_edit)
        self.schema_editor.sig_grammar_checked.connect(self.auto_rerun.on_checked)
        self.auto_rerun.sig_restarting.connect(
            lambda: self.status.showMessage("Schema edited: stopping this run to rerun it…")
        )
        # The note under the schema is the chosen compiler's own report.
        self.settings_panel.compiler.currentTextChanged.connect(self.schema_editor.set_compiler)
        self.schema_editor.editor.document().modificationChanged.connect(self.setWindowModified)
        self.schema_editor.ref_links.sig_follow_file.connect(self.follow_schema_ref)
        self.schema_editor.ref_links.sig_note.connect(lambda m: self.status.showMessage(m, 8000))
        # The live check's inputs; each message's one home (app/shell/routing.py).
        self.routing = Routing(self.views, self.session, self.status, self.banner, self.panes)

    def _restore(self) -> None:
        s = self.store
        self.settings_panel.set_settings(s.model_settings(), s.generation_settings())
        schema, prompt, path = s.draft()
        example = s.draft_example()
        if schema is None:
            first = examples()[0]
            schema, prompt, path, example = first.schema_text, first.prompt, None, first.title
        # Initial text needs no undo history: plain setPlainText is right here.
        self.schema_editor.editor.setPlainText(schema)
        self.prompt_pane.editor.setPlainText(prompt or "")
        self.schema_editor.check_now()
        self._set_path(path, example)
        self.log_action.setChecked(s.log_scale())
        self.auto_rerun_action.setChecked(s.auto_rerun())
        self.step_chart.set_log_scale(s.log_scale())
        self.bar_log_action.setChecked(s.bar_log_scale())
        self.step_chart.set_bar_log_scale(s.bar_log_scale())
        if (geometry := s.geometry("window")) is not None:
            self.restoreGeometry(geometry)
        if (state := s.geometry("window_state")) is not None:
            self.restoreState(state)
        self.panes.restore_layout(s.geometry(PANES_KEY))
        if (state := s.geometry(CHART_SPLITTER_KEY)) is not None:
            self.step_chart.splitter.restoreState(state)
        s.remove_geometry(*OLD_SPLITTER_KEYS)  # the columns are dock panes now

    def _save_state(self) -> None:
        s = self.store
        s.set_geometry("window", self.saveGeometry())
        s.set_geometry("window_state", self.saveState())
        s.set_geometry(PANES_KEY, self.panes.save_layout())
        s.set_geometry(CHART_SPLITTER_KEY, self.step_chart.splitter.saveState())
        # The model settings were stored when the model loaded, and only then.
        s.set_generation_settings(self.settings_panel.generation_settings())
        texts = (self.schema_editor.text(), self.prompt_pane.text())
        if texts != self._draft_baseline:
            s.set_draft(*texts, self.current_path)
            s.set_draft_example(self.current_example)
        s.set_log_scale(self.log_action.isChecked())
        s.set_bar_log_scale(self.bar_log_action.isChecked())
        s.sync()

    # --- saved runs ------------------------------------------------------------------------
    def save_run_dialog(self) -> None:
        if path := ask_save_path(self, "Save run", "run.json", RUN_FILTER):
            self.save_run(path)

    def save_run(self, path: str) -> bool:
        run = self.current_run()
        if run is None:
            return False
        try:
            save_run(path, run)
        except MaskscopeError as e:
            self._report("Cannot save run", e.message)
            return False
        self.status.showMessage(f"Saved run to {path}", 5000)
        return True

    def open_run_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open run", "", RUN_FILTER)
        if path:
            self.open_run(path)

    def open_run(self, path: str) -> bool:
        """Replay a saved run; schema and prompt come back as undoable edits."""
        if self.controller.running:
            self._report("Cannot open run", "a run is in progress; stop it first")
            return False
        try:
            run = load_run(path)
        except MaskscopeError as e:
            self._report("Cannot open run", e.message)
            return False
        self.banner.hide()
        self.schema_editor.set_text(run.schema_text)
        self.auto_rerun.forget_edit()  # a replay's schema is not an edit to rerun
        self.prompt_pane.set_text(run.prompt)
        self._set_path(None)
        self.show_run(run, f"the saved run {Path(path).name}")
        made = run_settings(run)
        self.status.showMessage(
            f"Replaying a saved run of {run.model} ({made.compiler} compiler, "
            f"{made.backend} backend) from {path}",
            0,
        )
        return True

    def show_run(self, run: SavedRun, subject: str = "a saved run") -> None:
        """Replay a run in the chart, output and timeline, leaving the editors alone;
        `subject` names it there and in the status bar."""
        self.session.replay(run, subject)
        self.step_chart.set_temperature(run_settings(run).temperature)
        self.demo.run_shown(run_settings(run).temperature)
        self.routing.run_started()
        self.output_view.set_records(run.records)
        self._on_finished(run.result, replay=True)

    def show_subject(self, subject: str) -> None:
        """Name the run on screen wherever it is drawn."""
        self.step_chart.set_subject(subject)
        self.output_view.set_subject(subject)
        self.status.set_subject(subject)

    # The run on screen is the session's; these read it under the window's old names.
    @property
    def run_inputs(self) -> tuple[str, str]:
        """(schema text, prompt) of the run the views show."""
        return self.session.inputs

    @property
    def last_result(self) -> RunResult | None:
        return self.session.result

    @last_result.setter
    def last_result(self, result: RunResult | None) -> None:
        self.session.result = result

    @property
    def last_error(self) -> tuple[str, str] | None:
        """(kind, message) of the last run that could not start or went wrong."""
        return self.session.error

    @last_error.setter
    def last_error(self, error: tuple[str, str] | None) -> None:
        self.session.error = error

    @property
    def model_info(self) -> ModelInfo | None:
        return self.session.model_info

    @property
    def previous_run(self) -> SavedRun | None:
        """The last run that ended on its own, which the next is compared with."""
        return self.session.previous

    def current_run(self) -> SavedRun | None:
        """The run the views show, once it has ended."""
        return self.session.run()

    # --- running ---------------------------------------------------------------------------
    def run(self, paused: bool = False) -> bool:
        """Start a run; False when one is going on or the schema is already known bad."""
        if self.controller.running:
            return False
        self.banner.hide()
        self.session.forget_result()
        schema_text = self.schema_editor.text()
        if self.routing.refuse_run():
            return False
        try:  # cheap local check: a bad schema is reported without waking the worker
            parse_schema(schema_text)
            schema_text = self.bundled_schema(schema_text)  # one document, as engines take
        except MaskscopeError as e:
            self.routing.not_run(e.kind, e.message)  # the Problems list has every error
            return False
        generation = self.settings_panel.generation_settings()
        if (problem := generation.problem()) is not None:  # the panel greys these out
            self._on_error("settings", problem)
            return False
        self.store.set_generation_settings(generation)
        self.session.user_run_starting()
        return self.start_run(schema_text, self.prompt_pane.text(), generation, paused=paused)

    def start_run(
        self,
        schema_text: str,
        prompt: str,
        generation: GenerationSettings,
        forced: tuple[int, ...] = (),
        paused: bool = False,
        subject: str = YOUR_RUN,
    ) -> bool:
        """Start a run on these inputs, which need not be the editors' (a branch runs on
        its original's); `paused` waits for Step before the first token; `subject` names
        the run in the chart, the output and the status bar."""
        if self.controller.running:
            return False
        self.banner.hide()
        model = self.settings_panel.model_settings()
        self.session.start(schema_text, prompt, subject)
        self.save_run_action.setEnabled(False)
        self.step_chart.set_temperature(generation.temperature)
        self.routing.run_started()
        self.status.run_started(generation.max_tokens)
        self.demo.run_started(paused, generation.temperature)
        self.controller.start(RunRequest(schema_text, prompt, model, generation, forced))
        self._set_running(True)
        return True

    def stop(self) -> None:
        if self.controller.running:
            self.controller.stop()
            self.status.showMessage("Stopping after the current token…")

    def _set_running(self, running: bool) -> None:
        self.run_action.setEnabled(not running)
        self.stop_action.setEnabled(running)

    def _model_chosen(self, settings: ModelSettings) -> None:
        """Another model in the field: its old error is moot, and the bar names the new one."""
        self.banner.clear("model")
        self.status.set_model_wanted(_model_name(settings))
        self.controller.load(settings)

    def _preload_model(self) -> None:
        self.controller.load(self.settings_panel.model_settings())

    def _on_model_loaded(self, settings: ModelSettings, info: ModelInfo) -> None:
        self.store.set_model_settings(settings)
        self.session.model_loaded(info)
        self.status.set_model(info)
        if not self.controller.running:  # a preload: replace "Loading model…"
            self.status.showMessage(f"Model loaded: {info.name}", 5000)
        self.settings_panel.set_chat_template_available(info.has_chat_template)
        self.routing.model_loaded(str(info.path))

    def _on_provenance(self, provenance: Provenance | None) -> None:
        self.session.set_provenance(provenance)

    def _on_step(self, record: StepRecord) -> None:
        self.session.add(record)  # the chart and the output draw it (see _watch_session)

    def _on_finished(self, result: RunResult, replay: bool = False) -> None:
        self.session.finish(result)
        self.save_run_action.setEnabled(True)
        self.step_chart.redraw()  # draw the last step now, not on the next timer tick
        self.output_view.show_result(result, self.routing.violations(result, self.run_inputs[0]))
        self.routing.finished()
        if not replay and (before := self.session.keep_as_previous()) is not None:
            # Each run that ended on its own is compared with the one before it.
            self.compare_view.compare(before, self.session.previous)
        self.status.set_speed(result.tokens_per_s)
        self.status.showMessage(f"Finished: {verdict(result)[0]} · {result.n_tokens} tokens", 0)

    def _on_error(self, kind: str, message: str) -> None:
        self.session.fail(kind, message)
        if self.routing.run_error(kind, message):  # a schema error: the Problems list's
            return
        title = "Error" if kind == "error" else f"{kind[:1].upper()}{kind[1:]} error"
        # A model that cannot load (none on this machine, a corrupt file): choose another.
        fix = ("Choose GGUF…", self.settings_panel.browse_model) if kind == "model" else None
        if kind == "model":
            self.status.set_model_failed(_model_name(self.settings_panel.model_settings()), message)
        self._report(title, message, kind, fix)
        self.output_view.show_error(kind, message)

    def _on_run_ended(self) -> None:
        self.demo.run_ended()
        self._set_running(False)
        self.status.run_ended()
        self.session.ended()
        self.sig_run_ended.emit()

    def report_problem(self, title: str, message: str) -> None:
        """A file problem (an export that could not be written) in the banner."""
        self._report(title, message)

    def _report(
        self,
        title: str,
        message: str,
        cause: str = "file",
        fix: tuple[str, Callable[[], None]] | None = None,
    ) -> None:
        """Errors with no other home go to the banner (only there), never to a modal box or
        a traceback; `cause` lets the banner clear once that cause is gone."""
        self.last_report = f"{title}: {message}"
        self.banner.show_message(title, message, cause, fix)
        self.status.clearMessage()  # a worker state ("Compiling schema…") is over

    def _about(self) -> None:
        AboutDialog(self, self.session.model_name).exec()

    # --- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        # Both questions first, then the discards: a Cancel on the second keeps all edits.
        editor = self.suites.pane.editor
        schema = self.answer_unsaved_schema("closing")
        suite = None if schema is Unsaved.CANCEL else editor.answer_unsaved("closing")
        if Unsaved.CANCEL in (schema, suite):
            event.ignore()
            return
        # The user's answer outranks the draft and the autosave: what they discarded must
        # not come back on the next start under the file's name.
        if schema is Unsaved.DISCARD:
            self.discard_schema_edits()
        if suite is Unsaved.DISCARD:
            editor.discard_edits()
        # Stop and wait for the worker (at most one token or one model load), then keep
        # the schema and prompt as a draft so quitting never loses edits.
        self.controller.shutdown()
        self._save_state()
        self.crash_restore.quit_cleanly()
        event.accept()


def _model_name(settings: ModelSettings) -> str:
    """The file a model setting names, as the status bar shows a loaded model's."""
    return Path(settings.path).name if settings.path else DEFAULT_MODEL_FILE
