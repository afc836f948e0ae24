"""What the Engines pane shows, computed off the GUI thread: the engines report of one
schema text, or the one line that says why there is none.

`check` is pure and slow (some engines compile in child processes, XGrammar's loads torch:
seconds); `NewestOnly` runs it on one daemon thread (app/background.py), and a request made
while one runs replaces any still waiting, so that a burst of edits costs one more check,
not one per edit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from engine.engines.report import EngineResult, engines_report
from engine.errors import MaskscopeError, SchemaSyntaxError
from engine.schema.parse import parse_schema

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One check: every target's result, or `problem` (and no results) when the schema
    does not parse or the report failed."""

    results: tuple[EngineResult, ...] = ()
    problem: str | None = None


def check(text: str) -> Outcome:
    """The engines report of `text`; a schema that does not parse is one line, not six
    copies of the same error."""
    if not text.strip():
        return Outcome(problem="No schema: the editor is empty.")
    try:
        parse_schema(text)
    except SchemaSyntaxError as e:
        return Outcome(problem=f"The schema is not valid JSON: {e.message}")
    except MaskscopeError as e:
        return Outcome(problem=f"The schema is not a valid JSON Schema: {e.message}")
    try:
        return Outcome(engines_report(text))
    except Exception as e:  # a bug of the report's own: a line in the pane, not a traceback
        log.exception("engines report failed")
        return Outcome(problem=f"internal error while checking: {type(e).__name__}: {e}")
