"""One schema text, every production engine: one `EngineResult` per target.

Each local target runs the Maskscope compiler that stands for its engine, through
compile_schema as the problems list does (engine/workbench/problems.py `collect`).
Maskscope's compiler and llama.cpp's converter run here: their GBNF is judged by llama.cpp in
a child process already (engine/grammar/judge/verdicts.py). The compilers that are native code all
the way (llguidance, outlines-core, XGrammar) each run in a child process of their own with
a time and memory limit (isolated.py), all at once: outlines-core asks for gigabytes on
deeply nested arrays, and that must cost a cell, not the window. A compiler this Maskscope
does not have (xgrammar before it lands), or one whose library is not installed, reads
`compiles: False` with the reason. OpenAI's row is the documented profile
(openai_profile.py), not a run.

`engines_report` is pure (no Qt, no shared state but the judge's verdict cache) and may be
called off the GUI thread.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable
from dataclasses import dataclass

from engine.engines import isolated
from engine.engines.openai_profile import DOCS_DATE, ProfileLint, check_openai
from engine.engines.targets import TARGETS, Target
from engine.errors import MaskscopeError
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.llamacpp.converter import converter_in_use
from engine.grammar.report import Unenforced
from engine.schema.parse import parse_schema
from engine.settings import COMPILERS
from engine.workbench.locate import locate

__all__ = ["EngineResult", "ProfileLint", "engines_report", "installed_version"]

# Compilers whose whole compile is native code: each runs in a child with limits.
ISOLATED = frozenset({"llguidance", "outlines", "xgrammar"})


@dataclass(frozen=True, slots=True)
class EngineResult:
    """What one production engine does with the schema.

    `compiles`: the engine made a grammar of it (for openai: no documented rule would make
    the API refuse it). `message`: the engine's own words when it did not. `unenforced`: the
    keywords it skips. `lints`: the profile's broken rules, with fixes (openai only; None
    for the engines that run).
    """

    target: str
    label: str
    engine: str
    version: str | None  # the installed distribution's; for openai, the docs' date
    compiles: bool
    message: str | None
    unenforced: tuple[Unenforced, ...]
    lints: tuple[ProfileLint, ...] | None = None


def engines_report(text: str, targets: Iterable[Target] = TARGETS) -> tuple[EngineResult, ...]:
    """One result per target, in the targets' order, for one schema text."""
    rows = tuple(targets)
    pending = {
        row.id: isolated.start(text, row.compiler, row.engine)
        for row in rows
        if row.compiler in ISOLATED and row.compiler in COMPILERS
    }  # started first, so that they run while the others do
    return tuple(_result(text, row, pending.get(row.id)) for row in rows)


def installed_version(package: str | None) -> str | None:
    if package is None:
        return None
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _result(text: str, row: Target, child: isolated.Pending | None) -> EngineResult:
    if row.compiler is None:
        return _openai(text, row)
    # Which llama.cpp converter runs here: the C++ one llama-server runs, or the fallback.
    engine = converter_in_use().label if row.compiler == "llamacpp" else row.engine
    head = (row.id, row.label, engine, installed_version(row.package))
    if row.compiler not in COMPILERS:
        message = f"this Maskscope has no {row.compiler} compiler yet"
        return EngineResult(*head, False, message, ())
    if child is not None:
        done = child.result()
        return EngineResult(*head, done.compiles, done.message, done.unenforced)
    try:
        compiled = compile_schema(text, row.compiler)
    except MaskscopeError as exc:
        return EngineResult(*head, False, exc.message, ())
    except Exception as exc:  # an engine's own bug: the report still stands, others too
        message = f"{row.engine} failed: {type(exc).__name__}: {exc}"
        return EngineResult(*head, False, message, ())
    return EngineResult(*head, True, None, compiled.unenforced)


def _openai(text: str, row: Target) -> EngineResult:
    head = (row.id, row.label, row.engine, DOCS_DATE)
    try:
        schema = parse_schema(text)
    except MaskscopeError as exc:
        return EngineResult(*head, False, exc.message, (), ())
    try:
        found = check_openai(schema, locate(text))
    except Exception as exc:  # a bug of the profile's own: the other rows still stand
        message = f"the profile check failed: {type(exc).__name__}: {exc}"
        return EngineResult(*head, False, message, (), ())
    message = None if found.accepted else _refusal(found.lints)
    return EngineResult(*head, found.accepted, message, found.unenforced, found.lints)


def _refusal(lints: tuple[ProfileLint, ...]) -> str:
    first = lints[0]
    more = f" (and {len(lints) - 1} more)" if len(lints) > 1 else ""
    return f"the API would refuse the schema: {first.path}: {first.note}{more}"
