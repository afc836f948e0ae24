"""What every subcommand shares: exit codes, and a suite loaded with its warnings said."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.suite.format import Suite

EXIT_VALID, EXIT_INVALID, EXIT_BAD_INPUT, EXIT_BROKEN_BUILD = 0, 1, 2, 3


def load_suite_warned(path: str) -> Suite:
    """The suite file, its warnings (engine/suite/load.py suite_warnings: a variable no
    placeholder uses, a case that can never pass) each a line on stderr."""
    from engine.suite.load import load_suite, suite_warnings

    suite = load_suite(path)
    for warning in suite_warnings(suite):
        print(f"maskscope: warning: {path}: {warning}", file=sys.stderr)
    return suite
