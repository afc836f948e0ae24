"""Everything wrong with a schema text, located: the problems list's one source.

`collect` is what the window's problems list and `maskscope lint` both show: JSON syntax,
every meta-schema error, whether the grammar compiles and the backend takes it
(contradictions included), the keywords the grammar does not enforce, where it enforces
more than the schema says, and the lints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.errors import MaskscopeError, SchemaSyntaxError
from engine.grammar.compile import CompiledSchema
from engine.schema.parse import parse_json_text
from engine.schema.siblings import Bundled, ExternalRefError, bundle_schema
from engine.workbench.bound import output_bound
from engine.workbench.enforcement import overconstrained_problems, unenforced_problems
from engine.workbench.entries import Fix, Problem, TextEdit
from engine.workbench.lints import lint
from engine.workbench.locate import Spans, locate, path_parts
from engine.workbench.meta import meta_problems
from engine.workbench.siblings import ref_problem, relocated
from engine.workbench.will_run import compile_for

__all__ = ["Fix", "Problem", "Report", "TextEdit", "collect"]


@dataclass(frozen=True, slots=True)
class Report:
    """Every problem of one schema text under one compiler and backend."""

    problems: tuple[Problem, ...]  # errors first, then by place in the text
    compiled: CompiledSchema | None  # None when no grammar was made
    compile_ms: float | None
    output_bound: int | None = None  # longest valid output in tokens; None: unbounded/unknown
    # What was compiled: the bundle of a schema that refers to other files; None: the text.
    bundled_text: str | None = None

    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "error")

    def unenforced(self) -> tuple[Problem, ...]:
        return self._kind("unenforced")

    def overconstrained(self) -> tuple[Problem, ...]:
        return self._kind("overconstrained")

    def lints(self) -> tuple[Problem, ...]:
        return self._kind("lint")

    @property
    def runs(self) -> bool:
        """A grammar was made and nothing stops it running on the backend."""
        return self.compiled is not None and not self.errors()

    def _kind(self, kind: str) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.kind == kind)


def collect(
    text: str,
    compiler: str,
    backend: str,
    *,
    max_tokens: int | None = None,
    prompt: str = "",
    tokenize: Callable[[str], list[int]] | None = None,
    file: str | None = None,
    root: str | None = None,
) -> Report:
    """The problems of `text` as a run under `compiler` on `backend` would meet them.

    Lints run only on a schema that passes its meta-schema. The output bound needs
    `tokenize` (the model's tokenizer, plain text, no BOS); without it the bound is None.
    `file` is where the text is kept: the files its `$ref`s name are read from its folder,
    never outside `root` (by default that folder), and checked as one bundle.
    """
    try:
        schema = parse_json_text(text)
    except SchemaSyntaxError as exc:
        problem = Problem(
            "error", "syntax", f"JSON syntax error: {exc.reason}", "$", exc.line, exc.column,
            offset=exc.offset,
        )  # fmt: skip
        return Report((problem,), None, None)
    spans = locate(text)
    try:
        bundled = bundle_schema(text, file, root) if file else Bundled(text)
    except ExternalRefError as exc:
        return Report((ref_problem(exc, spans),), None, None)
    except MaskscopeError as exc:  # the root's $defs is no object, or the file is outside root
        return Report((Problem("error", "schema", exc.message, "$", 1, 1, offset=0),), None, None)
    if bundled.files:
        schema = parse_json_text(bundled.text)
    report = _checked(bundled.text, schema, spans, compiler, backend, max_tokens, prompt, tokenize)
    if not bundled.files:
        return report
    problems = [relocated(p, bundled, spans) for p in report.problems]
    return dataclasses.replace(report, problems=_ordered(problems), bundled_text=bundled.text)


def _checked(
    text: str,
    schema: Any,
    spans: Spans,
    compiler: str,
    backend: str,
    max_tokens: int | None,
    prompt: str,
    tokenize: Callable[[str], list[int]] | None,
) -> Report:
    """collect's checks on a schema that parsed; `text` is what is compiled (a bundle of a
    multi-file schema), `spans` locate the editor's own text."""
    problems = meta_problems(schema, spans)
    if problems:
        return Report(_ordered(problems), None, None)
    result = compile_for(text, compiler, backend)
    problems += [_grammar_problem(spans, f.message, f.path) for f in result.failures]
    compiled = result.compiled
    bound = None
    if compiled is not None:
        problems += unenforced_problems(compiled, spans)
        problems += overconstrained_problems(compiled, spans)
        if tokenize is not None and compiled.gbnf:
            bound = output_bound(compiled.gbnf, tokenize)
    problems += lint(schema, spans, compiler, prompt)
    if bound is not None and max_tokens is not None and max_tokens < bound:
        problems.append(_below_bound(spans, max_tokens, bound))
    return Report(_ordered(problems), compiled, result.compile_ms, bound)


def _grammar_problem(spans: Spans, message: str, path: str) -> Problem:
    offset = spans.start_of(path_parts(path) or ())
    line, column = spans.line_col(offset) if offset is not None else (None, None)
    return Problem("error", "grammar", message, path, line, column, offset=offset)


def _below_bound(spans: Spans, max_tokens: int, bound: int) -> Problem:
    message = (
        f"Max tokens is {max_tokens}, below the longest valid output ({bound} tokens): "
        "a long answer would be cut off and not be valid JSON"
    )
    line, column = spans.line_col(0)
    return Problem(
        "warning", "lint", message, "$", line, column, "max-tokens-below-bound", offset=0
    )


def _ordered(problems: list[Problem]) -> tuple[Problem, ...]:
    return tuple(sorted(problems, key=lambda p: p.rank))
