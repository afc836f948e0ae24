"""`maskscope gui`: the window, started as its own program so that the engine never loads Qt."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys

from engine.errors import MaskscopeError
from engine.examples import EXAMPLE_ORDER


def add_gui_arguments(p: argparse.ArgumentParser) -> None:
    """The window's options; app/main.py parses them with this same function."""
    schema = p.add_mutually_exclusive_group()
    schema.add_argument("--schema", metavar="FILE", help="JSON Schema file to open")
    schema.add_argument(
        "--example", choices=EXAMPLE_ORDER, help="open a bundled example, with its settings"
    )
    schema.add_argument(
        "--open-run",
        metavar="RUN",
        help="replay a saved run (File > Save run, or generate --save-run) without a model",
    )
    p.add_argument(
        "--open-result",
        metavar="FILE",
        help="show a saved `maskscope test --json` result in the Suite pane (File > Open "
        "Test Result); its samples open from the run cache",
    )
    p.add_argument("--prompt-file", metavar="FILE", help="text file to use as the prompt")
    p.add_argument(
        "--presentation",
        action="store_true",
        help="start in presentation mode: chart and explanation full screen (F11 toggles)",
    )
    p.add_argument("--model", metavar="GGUF", help="GGUF model file (default: Gemma 3 270M)")
    p.add_argument("--autorun", action="store_true", help="start a run once the window shows")
    p.add_argument(
        "--screenshot",
        metavar="PNG",
        help="save a PNG of the window after the run ends (or once shown, without --autorun)",
    )
    p.add_argument(
        "--quit-after-run",
        action="store_true",
        help="exit after the run (and the screenshot); exit status 1 if the run failed",
    )


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gui", help="open the window (the default command)")
    add_gui_arguments(p)
    p.set_defaults(func=cmd_gui)


def cmd_gui(args: argparse.Namespace) -> int:
    """Start the window as its own program (`python -m app.main`): the engine never loads Qt."""
    if importlib.util.find_spec("PySide6") is None:
        raise MaskscopeError("the window needs PySide6; install Maskscope with `make run`")
    return subprocess.call([sys.executable, "-m", "app.main", *args.gui_argv])
