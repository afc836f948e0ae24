"""`maskscope report`: a saved run as a self-contained HTML page, with no model."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.cli.base import EXIT_VALID
from engine.errors import MaskscopeError
from engine.report import render_report
from engine.runs.saved import load_run, write_atomically


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write a saved run as one HTML page that opens offline (no model needed)",
        description="Write a saved run (maskscope generate --save-run, or File → Save run) as "
        "one self-contained HTML page: the schema, prompt, output and validation, the valid "
        "mass and entropy charts, every step's candidates and arithmetic, and the run's "
        "provenance. The page runs no script and loads nothing.",
    )
    p.add_argument("run", metavar="RUN.json", help="a saved run file")
    p.add_argument(
        "--out", metavar="REPORT.html", help="where to write it (default: RUN with .html)"
    )
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    run = load_run(Path(args.run).expanduser())
    out = Path(args.out).expanduser() if args.out else Path(args.run).with_suffix(".html")
    try:
        write_atomically(out, render_report(run))
    except OSError as exc:
        raise MaskscopeError(f"cannot write report {out}: {exc.strerror}") from None
    print(f"wrote {out}")
    return EXIT_VALID
