"""Entry point of the desktop app: ``maskscope gui`` or ``python -m app.main``.

engine/cli.py starts this module as its own program, so the engine never loads Qt.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from engine.cli import add_gui_arguments

SCREENSHOT_DELAY_MS = 300  # lets the last chart redraw and the layout settle first


def main_gui(args: argparse.Namespace) -> int:
    # Imported here so that `--help` and argument errors do not pay for Qt and pyqtgraph.
    from app.main_window import MainWindow

    for path in (args.schema, args.prompt_file):
        if path and not Path(path).is_file():
            print(f"maskscope gui: no such file: {path}", file=sys.stderr)
            return 2
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Maskscope")
    app.setOrganizationName("Maskscope")
    window = MainWindow()
    opened = (not args.schema or window.open_schema(_absolute(args.schema))) and (
        not args.prompt_file or window.open_prompt(args.prompt_file)
    )
    if not opened:  # unreadable file: the banner has the reason, stderr gets it too
        print(f"maskscope gui: {window.last_report}", file=sys.stderr)
        window.close()  # ends the worker thread before Python tears Qt down
        return 2
    if args.schema or args.prompt_file:
        window.keep_saved_draft()
    if args.model:  # stored once it loads, so it must not depend on this folder
        window.settings_panel.set_model_path(_absolute(args.model))
    window.show()
    failed = False

    def finish() -> None:
        nonlocal failed
        if args.screenshot and not window.grab().save(args.screenshot):
            print(f"maskscope: could not write {args.screenshot}", file=sys.stderr)
            failed = True
        if args.quit_after_run:
            window.close()

    def run_ended() -> None:
        nonlocal failed
        failed = failed or window.last_error is not None
        QTimer.singleShot(SCREENSHOT_DELAY_MS, finish)

    def autorun() -> None:
        nonlocal failed
        if not window.run():  # refused up front (bad schema): there will be no run to wait for
            failed = True
            QTimer.singleShot(SCREENSHOT_DELAY_MS, finish)

    if args.autorun:
        window.sig_run_ended.connect(run_ended)
        QTimer.singleShot(0, autorun)
    elif args.screenshot or args.quit_after_run:
        QTimer.singleShot(SCREENSHOT_DELAY_MS, finish)
    code = app.exec()
    return 1 if failed else code


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def main(argv: list[str] | None = None) -> int:
    """`python -m app.main ARGS`, which `maskscope gui ARGS` runs; options from engine/cli.py."""
    parser = argparse.ArgumentParser(prog="maskscope gui", description="Open the Maskscope window.")
    add_gui_arguments(parser)
    return main_gui(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
