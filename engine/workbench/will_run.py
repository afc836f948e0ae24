"""Whether the schema becomes a grammar the selected backend runs, and contradictions.

A check mark in the window means "this will run": the schema compiled with the chosen
compiler, and the chosen backend took the grammar (llama.cpp's judge already ran inside
compile_schema; llguidance's own grammar check runs here, without a model). A schema that
allows no value at all is an error under every compiler: Maskscope's compiler proves it
(GrammarError "the schema allows no value"), so it is asked even when another compiler was
chosen, since llama.cpp's converter writes a grammar for such a schema without a word.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import llguidance

from engine.errors import GrammarError, MaskscopeError
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.grammar.compilers.maskscope.compiler import compile_to_gbnf
from engine.grammar.rewrite import distinct_lark_names
from engine.masking.llguidance import gbnf_to_lark
from engine.schema.parse import parse_schema
from engine.settings import GenerationSettings

# Our compiler's messages end with the subschema's path: "... (at $.properties.a)".
_PATH_AT_END = re.compile(r"\((?:at )?(\$.*)\)$")
_NO_VALUE = ("the schema allows no value", "the schema `false` allows no value")


@dataclass(frozen=True, slots=True)
class GrammarFailure:
    """Why the schema will not run: a one-line message and the path it names ("$")."""

    message: str
    path: str = "$"


@dataclass(frozen=True, slots=True)
class Compiled:
    """The grammar (None when none was made), its compile time, and why it will not run."""

    compiled: CompiledSchema | None
    compile_ms: float | None
    failures: tuple[GrammarFailure, ...]


def path_in(message: str) -> str:
    """The JSON path a compiler's message ends with, or "$"."""
    found = _PATH_AT_END.search(message)
    return found.group(1) if found else "$"


def compile_for(text: str, compiler: str, backend: str) -> Compiled:
    """Compile as a run would, then prove the backend takes the grammar."""
    settings_problem = GenerationSettings(compiler=compiler, backend=backend).problem()
    if settings_problem:
        return Compiled(None, None, (GrammarFailure(settings_problem),))
    start = time.perf_counter()
    try:
        compiled = compile_schema(text, compiler)
    except MaskscopeError as exc:
        ms = _ms(start)
        # Another compiler's words for a contradiction can be cryptic (llama.cpp on an
        # empty enum): ours name it, where it is one.
        plain = [] if compiler == "maskscope" else _contradictions(parse_schema(text))
        failures = plain or [GrammarFailure(exc.message, path_in(exc.message))]
        return Compiled(None, ms, tuple(failures))
    ms = _ms(start)
    failures = [*_backend_refusal(compiled, backend)]
    if compiler != "maskscope":  # ours compiled it, so some value satisfies it
        failures[:0] = _contradictions(compiled.schema)
    # The grammar stays for the grammar view; the errors say it will not run.
    return Compiled(compiled, ms, tuple(failures))


def _contradictions(schema: Any) -> list[GrammarFailure]:
    try:
        compile_to_gbnf(schema)
    except GrammarError as exc:
        if exc.message.startswith(_NO_VALUE):
            return [GrammarFailure(exc.message, path_in(exc.message))]
    return []


def _backend_refusal(compiled: CompiledSchema, backend: str) -> list[GrammarFailure]:
    """llguidance's verdict on a GBNF grammar; the llamacpp backend's came with compiling."""
    if backend != "llguidance" or compiled.kind != "gbnf":
        return []
    try:
        grammar = llguidance.LLMatcher.grammar_from_lark(
            gbnf_to_lark(distinct_lark_names(compiled.gbnf))
        )
        is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar)
    except MaskscopeError as exc:
        return [GrammarFailure(exc.message)]
    except ValueError as exc:  # llguidance's Lark reader refusing the translation
        return [GrammarFailure(f"the llguidance backend refuses the grammar: {exc}")]
    if is_error:
        first = messages[0].strip().splitlines()[0] if messages else "no reason given"
        return [GrammarFailure(f"the llguidance backend refuses the grammar: {first}")]
    return []


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
