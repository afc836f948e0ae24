"""The `maskscope` command: open the window, generate headless, benchmark, set up."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from engine.bench.options import add_bench_arguments
from engine.cli import bundle, check, generate, gui, lint, report, setup, suite
from engine.cli.base import EXIT_BAD_INPUT, EXIT_BROKEN_BUILD
from engine.cli.internal import report_internal_error
from engine.cli.version import version_text
from engine.errors import MaskscopeError
from engine.llama_build.verdict import BrokenBuildError


def _add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure per-step costs of each backend side by side")
    add_bench_arguments(p)
    p.set_defaults(func=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    # Imported only when asked for: it loads llama.cpp, which no other command's parser needs.
    from engine.bench.measure import cmd_bench

    return cmd_bench(args)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other bad-input reason; --help has the rest."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """argparse's own version action rewraps the text into one paragraph: one line a part."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="maskscope",
        description="See and test constrained decoding: token probabilities before and after "
        "the JSON Schema's mask, on a real llama.cpp model.",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print Maskscope's, llama.cpp's and Qt's versions, and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    gui.add_parser(sub)
    generate.add_parser(sub)
    _add_bench(sub)
    setup.add_parser(sub)
    check.add_parser(sub)
    lint.add_parser(sub)
    report.add_parser(sub)
    suite.add_parser(sub)
    bundle.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    raw = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(raw)
    if args.command is None:
        args = parser.parse_args(["gui", *raw])
    if args.command in (None, "gui"):
        args.gui_argv = raw[1:] if raw[:1] == ["gui"] else raw
    try:
        return args.func(args)
    except BrokenBuildError as exc:
        print(f"maskscope: {exc.kind}: {exc}", file=sys.stderr)
        return EXIT_BROKEN_BUILD
    except MaskscopeError as exc:
        kind = "" if type(exc) is MaskscopeError else f"{exc.kind}: "
        print(f"maskscope: {kind}{exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("maskscope: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one line here, the traceback in a log file
        report_internal_error(exc, raw)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
