"""Schema text -> a grammar a mask backend runs, by the compiler the user chose."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.errors import GrammarError
from engine.grammar.judge import check_parses
from engine.grammar.llamacpp_converter import schema_to_gbnf
from engine.grammar.llamacpp_coverage import unenforced_keywords
from engine.grammar.llguidance_compiler import compile_llguidance
from engine.grammar.maskscope.compiler import compile_to_gbnf
from engine.grammar.outlines_compiler import compile_outlines
from engine.grammar.report import Unenforced
from engine.schema.parse import parse_schema
from engine.settings import DEFAULT_COMPILER, ENGINE_COMPILERS


@dataclass(frozen=True, slots=True)
class CompiledSchema:
    """A schema that parsed, passed its meta-schema and became a grammar.

    `gbnf` is what the maskscope and llamacpp compilers produce, and runs on both backends.
    The llguidance compiler produces no GBNF: `llguidance_grammar` holds llguidance's own
    grammar (from its JSON Schema compiler), which only the llguidance backend runs. The
    outlines compiler produces a regex, `outlines_regex`, which only the outlines backend runs.
    """

    schema: Any
    gbnf: str
    text: str
    unenforced: tuple[Unenforced, ...] = ()  # keywords the grammar skips: warn, don't fail
    compiler: str = DEFAULT_COMPILER
    llguidance_grammar: str | None = None
    outlines_regex: str | None = None
    # Maskscope's compiler only: (JSON path, GBNF rule) pairs, for the grammar view.
    rule_paths: tuple[tuple[str, str], ...] = ()


def compile_schema(text: str, compiler: str = DEFAULT_COMPILER) -> CompiledSchema:
    """Parse, meta-validate and compile schema text; every failure is a MaskscopeError."""
    if compiler not in ENGINE_COMPILERS:
        choices = ", ".join(ENGINE_COMPILERS)
        raise GrammarError(f"unknown compiler {compiler!r}; choose one of {choices}")
    schema = parse_schema(text)
    if compiler == "llguidance":
        grammar, unenforced = compile_llguidance(schema)
        return CompiledSchema(schema, "", text, unenforced, compiler, llguidance_grammar=grammar)
    if compiler == "outlines":
        regex, unenforced = compile_outlines(schema)
        return CompiledSchema(schema, "", text, unenforced, compiler, outlines_regex=regex)
    rule_paths: tuple[tuple[str, str], ...] = ()
    if compiler == "maskscope":
        own = compile_to_gbnf(schema)
        gbnf, unenforced, rule_paths = own.gbnf, own.unenforced, own.rule_paths
    else:
        gbnf, unenforced = schema_to_gbnf(schema), tuple(unenforced_keywords(schema))
    check_parses(gbnf)  # in a child process: a grammar that crashes llama.cpp costs only it
    return CompiledSchema(schema, gbnf, text, unenforced, compiler, rule_paths=rule_paths)
