"""What the Engines pane shows, computed off the GUI thread: the engines report of one
schema text, or the one line that says why there is none.

`check` is pure and slow (some engines compile in child processes, XGrammar's loads torch:
seconds); `NewestOnly` runs it on one daemon thread (app/background.py), and a request made
while one runs replaces any still waiting, so that a burst of edits costs one more check,
not one per edit.

With a suite open, `feed` then runs the suite's known instances through every engine that
took the schema (engine/engines/wrong.py, check's worker processes: tens of seconds), on the
same thread; the pane shows the report first and the instances when they are in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.engines.report import EngineResult, engines_report
from engine.engines.wrong import WrongInstances, wrong_instances
from engine.errors import MaskscopeError, SchemaSyntaxError
from engine.schema.parse import parse_schema
from engine.suite.format import Instance

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One check: every target's result, or `problem` (and no results) when the schema
    does not parse or the report failed."""

    results: tuple[EngineResult, ...] = ()
    problem: str | None = None
    feeding: int = 0  # the suite's instances being fed now; the wrong ones come next
    wrong: dict[str, WrongInstances] | None = None  # per target, once fed
    wrong_problem: str | None = None  # why the instances could not be fed


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


def feed(
    text: str,
    instances: Sequence[Instance],
    outcome: Outcome,
    should_stop: Callable[[], bool],
) -> Outcome | None:
    """`outcome` with the instances each engine gets wrong; None when stopped (a newer
    text is on its way)."""
    try:
        wrong = wrong_instances(text, instances, outcome.results, should_stop=should_stop)
    except MaskscopeError as e:  # a worker that could not start: the model, say
        return replace(outcome, feeding=0, wrong_problem=e.message)
    except Exception as e:  # a bug of its own: a line in the pane
        log.exception("feeding the suite's instances failed")
        return replace(outcome, feeding=0, wrong_problem=f"{type(e).__name__}: {e}")
    if not wrong:
        return None
    return replace(outcome, feeding=0, wrong=wrong)
