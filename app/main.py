"""Entry point of the desktop app: ``maskscope gui`` or ``python -m app.main``.

engine/cli.py starts this module as its own program, so the engine never loads Qt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app.shell import bug_report
from app.shell.app_icon import app_icon
from engine.cli.base import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_BUILD,
    EXIT_INVALID,
    EXIT_VALID,
)
from engine.cli.gui import add_gui_arguments
from engine.errors import MaskscopeError
from engine.examples import load_example
from engine.llama_build.verdict import BrokenBuildError, ensure_build_runs

if TYPE_CHECKING:
    from app.main_window import MainWindow

SCREENSHOT_DELAY_MS = 300  # lets the last chart redraw and the layout settle first


def build_problem() -> str | None:
    """Why the llama.cpp build cannot run here, or None. The verdict is cached next to the
    build, so this costs a hash of its libraries after the first check."""
    try:
        ensure_build_runs()
    except BrokenBuildError as exc:
        return str(exc)
    except MaskscopeError:
        return None  # a model problem: the window opens and reports it where the model is set
    return None


def report_build_problem(problem: str, interactive: bool) -> int:
    print(f"maskscope: llama.cpp build: {problem}", file=sys.stderr)
    if interactive:
        app = QApplication.instance() or QApplication(sys.argv[:1])
        app.setApplicationName("Maskscope")
        what, *rest = problem.splitlines()
        box = QMessageBox(QMessageBox.Icon.Critical, "Maskscope cannot run llama.cpp", what)
        box.setInformativeText("\n\n".join(rest))  # the features involved, then the fix
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.exec()
    return EXIT_BROKEN_BUILD


def gui_thread_garbage_collector() -> object:
    """Python collects on whichever thread allocates (the live check, the grammar pane), and
    a Qt object collected off the GUI thread can crash the process; this turns automatic
    collection off and collects on a GUI-thread timer instead."""
    from pyqtgraph.util.garbage_collector import GarbageCollector  # imports pyqtgraph

    return GarbageCollector(interval=1.0)


def open_files(window: MainWindow, args: argparse.Namespace) -> bool:
    """The files the command line names, in the window; False at the first unreadable one.
    A schema opened without a prompt starts with an empty one: the stored draft's prompt
    belongs to another schema (the last example's). Undo brings it back."""
    opened = (
        (not args.schema or window.open_schema(_absolute(args.schema)))
        and (not args.prompt_file or window.open_prompt(args.prompt_file))
        and (not args.open_run or window.open_run(args.open_run))
        and (not args.open_result or window.suites.open_result(args.open_result))
    )
    if opened and args.schema and not (args.prompt_file or args.example or args.open_run):
        window.prompt_pane.set_text("")
    return opened


def _application() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Maskscope")
    app.setOrganizationName("Maskscope")
    app.setDesktopFileName("maskscope")  # Wayland matches the window to packaging/'s .desktop
    app.setWindowIcon(app_icon())
    return app


def _keep_what_was_opened(window: MainWindow, args: argparse.Namespace) -> None:
    if args.open_run:  # a replay from the command line is no edit to save on quitting
        window.schema_editor.editor.document().setModified(False)
    if args.schema or args.example or args.prompt_file or args.open_run:
        window.keep_saved_draft()
    if args.model:  # stored once it loads, so it must not depend on this folder
        window.settings_panel.set_model_path(_absolute(args.model))


def main_gui(args: argparse.Namespace) -> int:
    # The window loads llama.cpp as it opens: a build that would crash it is reported first.
    problem = build_problem()
    if problem is not None:
        return report_build_problem(problem, not (args.autorun or args.quit_after_run))
    # Imported here so that `--help` and argument errors do not pay for Qt and pyqtgraph.
    from app.main_window import MainWindow

    for path in (args.schema, args.prompt_file, args.open_run, args.open_result):
        if path and not Path(path).is_file():
            print(f"maskscope gui: no such file: {path}", file=sys.stderr)
            return 2
    app = _application()
    collector = gui_thread_garbage_collector()  # noqa: F841 (kept alive while the app runs)
    window = MainWindow()
    bug_report.install(window)
    if args.example:
        window.load_example(load_example(args.example))
    opened = open_files(window, args)
    if not opened:  # unreadable file: the banner has the reason, stderr gets it too
        print(f"maskscope gui: {window.last_report}", file=sys.stderr)
        window.close()  # ends the worker thread before Python tears Qt down
        return EXIT_BAD_INPUT
    _keep_what_was_opened(window, args)
    window.show()
    if args.presentation:
        window.demo.presentation.set_on(True)
    script = _Scripted(window, args)
    status = app.exec()  # first: the script's callbacks set its code while it runs
    return script.exit_code(status)


class _Scripted:
    """--autorun, --screenshot and --quit-after-run: the window driven as a script would,
    with `maskscope generate`'s exit codes (0 valid, 1 invalid or cut off, 2 bad input)."""

    def __init__(self, window: MainWindow, args: argparse.Namespace) -> None:
        self.window, self.args = window, args
        self.code = EXIT_VALID
        # Printed once the window has closed: while the worker loads a model, llama.cpp's
        # stderr is captured (engine/native_log.py), and a line printed then would vanish.
        self.reasons: list[str] = []
        if args.autorun:
            window.sig_run_ended.connect(self._run_ended)
            QTimer.singleShot(0, self._autorun)
        elif args.screenshot or args.quit_after_run:
            QTimer.singleShot(SCREENSHOT_DELAY_MS, self._finish)

    def exit_code(self, status: int) -> int:
        for reason in self.reasons:
            print(reason, file=sys.stderr)
        return max(self.code, status)

    def _fail(self, reason: str) -> None:
        self.reasons.append(reason)
        self.code = EXIT_BAD_INPUT

    def _finish(self) -> None:
        shot = self.args.screenshot
        if shot and not self.window.grab().save(shot):
            self._fail(f"maskscope: could not write {shot}")
        if self.args.quit_after_run:
            self.window.close()

    def _run_ended(self) -> None:
        window = self.window
        if window.last_error is not None:  # bad schema, grammar, model or prompt
            self._fail(f"maskscope gui: {_last_error(window)}")
        elif window.last_result is None or not window.last_result.valid:
            self.code = max(self.code, EXIT_INVALID)
        QTimer.singleShot(SCREENSHOT_DELAY_MS, self._finish)

    def _autorun(self) -> None:
        if not self.window.run():  # refused up front (bad schema): no run to wait for
            self._fail(f"maskscope gui: {_last_error(self.window)}")
            QTimer.singleShot(SCREENSHOT_DELAY_MS, self._finish)


def _last_error(window: MainWindow) -> str:
    """The last run's error in words; schema errors live in the Problems list, not the banner,
    so the banner's text may be empty."""
    if window.last_error is None:
        return window.last_report
    kind, message = window.last_error
    return message if kind == "error" else f"{kind} error: {message}"


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def main(argv: list[str] | None = None) -> int:
    """`python -m app.main ARGS`, which `maskscope gui ARGS` runs (options: engine/cli/gui.py)."""
    parser = argparse.ArgumentParser(prog="maskscope gui", description="Open the Maskscope window.")
    add_gui_arguments(parser)
    return main_gui(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
