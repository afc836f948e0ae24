"""Schema text -> a grammar a mask backend runs, by the compiler the user chose."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import GrammarError, MaskscopeError
from engine.grammar.compilers.llamacpp.converter import schema_to_gbnf
from engine.grammar.compilers.llamacpp.coverage import unenforced_keywords
from engine.grammar.compilers.llguidance.compiler import compile_llguidance
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf
from engine.grammar.compilers.outlines.compiler import compile_outlines, outlines_unenforced
from engine.grammar.compilers.xgrammar.compiler import compile_xgrammar
from engine.grammar.compilers.xgrammar.coverage import unenforced_keywords as xgrammar_unenforced
from engine.grammar.judge.verdicts import check_parses
from engine.grammar.report import Unenforced
from engine.schema.parse import parse_schema
from engine.settings import COMPILERS, DEFAULT_COMPILER, GRAMMAR_KINDS, GenerationSettings


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """A schema that parsed, passed its meta-schema and became a grammar.

    `gbnf` is what the maskscope and llamacpp compilers produce. The other compilers produce
    no GBNF but `native`, the engine's own grammar: llguidance's (its JSON Schema compiler's
    JSON), outlines-core's regex, XGrammar's EBNF. Which it is, and so which backends run it,
    is engine.settings.GRAMMAR_KINDS[compiler].
    """

    schema: Any
    gbnf: str
    text: str
    unenforced: tuple[Unenforced, ...] = ()  # keywords the grammar skips: warn, don't fail
    compiler: str = DEFAULT_COMPILER
    native: str | None = None
    # Maskscope's compiler only: (JSON path, GBNF rule) pairs, for the grammar view.
    rule_paths: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> str:
        """The kind of grammar: "gbnf", "llguidance", "regex" or "xgrammar"."""
        return GRAMMAR_KINDS[self.compiler]

    @property
    def grammar_text(self) -> str:
        """The grammar as the compiler made it: what a suite ships and its digest covers."""
        return self.gbnf or self.native or ""


def _maskscope(schema: Any, text: str) -> CompiledSchema:
    own = compile_to_gbnf(schema)
    return _checked_gbnf(schema, text, own.gbnf, own.unenforced, "maskscope", own.rule_paths)


def _llamacpp(schema: Any, text: str) -> CompiledSchema:
    gbnf, unenforced = schema_to_gbnf(schema), tuple(unenforced_keywords(schema))
    return _checked_gbnf(schema, text, gbnf, unenforced, "llamacpp")


def _checked_gbnf(
    schema: Any,
    text: str,
    gbnf: str,
    unenforced: tuple[Unenforced, ...],
    compiler: str,
    rule_paths: tuple[tuple[str, str], ...] = (),
) -> CompiledSchema:
    check_parses(gbnf)  # in a child process: a grammar that crashes llama.cpp costs only it
    return CompiledSchema(schema, gbnf, text, unenforced, compiler, rule_paths=rule_paths)


def _llguidance(schema: Any, text: str) -> CompiledSchema:
    grammar, unenforced = compile_llguidance(schema)
    return CompiledSchema(schema, "", text, unenforced, "llguidance", native=grammar)


def _xgrammar(schema: Any, text: str) -> CompiledSchema:
    ebnf, unenforced = compile_xgrammar(schema)
    return CompiledSchema(schema, "", text, unenforced, "xgrammar", native=ebnf)


def _outlines(schema: Any, text: str) -> CompiledSchema:
    regex, unenforced = compile_outlines(schema)
    return CompiledSchema(schema, "", text, unenforced, "outlines", native=regex)


@dataclass(frozen=True, slots=True)
class Compiler:
    """A compiler behind the one interface: schema -> grammar + report (`compile`), and the
    report alone, cheaply (`gaps`: no grammar judge, no child process, no engine build). A
    new engine is a new package under engine/grammar/compilers/ and a row below."""

    compile: Callable[[Any, str], CompiledSchema]
    gaps: Callable[[Any], Sequence[Unenforced]]


# One row per compiler in engine.settings.COMPILERS; the kind of grammar each makes, and so
# the backends that run it, is engine.settings.GRAMMAR_KINDS.
_COMPILERS: dict[str, Compiler] = {
    "maskscope": Compiler(_maskscope, lambda schema: compile_to_gbnf(schema).unenforced),
    "llamacpp": Compiler(_llamacpp, unenforced_keywords),
    "llguidance": Compiler(_llguidance, lambda schema: compile_llguidance(schema)[1]),
    "outlines": Compiler(_outlines, outlines_unenforced),
    "xgrammar": Compiler(_xgrammar, xgrammar_unenforced),
}


def compile_schema(text: str, compiler: str = DEFAULT_COMPILER) -> CompiledSchema:
    """Parse, meta-validate and compile schema text; every failure is a MaskscopeError."""
    found = _COMPILERS.get(compiler)
    if found is None:
        choices = ", ".join(COMPILERS)
        raise GrammarError(f"unknown compiler {compiler!r}; choose one of {choices}")
    return found.compile(parse_schema(text), text)


def gaps_of(schema: Any, compiler: str) -> tuple[Unenforced, ...] | None:
    """The keywords `compiler` would not enforce in `schema`, without building its grammar
    (for a question asked often: would this edit be enforced?); None when it refuses the
    schema or is unknown."""
    found = _COMPILERS.get(compiler)
    if found is None:
        return None
    try:
        return tuple(found.gaps(schema))
    except MaskscopeError:
        return None


def cross_grammar(compiled: CompiledSchema, settings: GenerationSettings) -> CompiledSchema | None:
    """The grammar a compilers' cross-check compares the run's own with (None for a
    backends' cross-check, or none): compiled here, before the run, so decoding never
    calls a compiler."""
    other = settings.cross_check_compiler if settings.cross_check else None
    return None if other is None else compile_schema(compiled.text, other)
