"""The grammar text each backend really runs for a compiled schema, for people to read."""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.grammar.compile import CompiledSchema
from engine.masking.llguidance import lark_text
from engine.masking.xgrammar import xgrammar_gbnf

# The language of each engine's own grammar text, shown as the compiler made it.
_NATIVE = {"regex": "regex", "xgrammar": "ebnf"}


@dataclass(frozen=True, slots=True)
class Grammar:
    """The grammar one backend runs, as text, and what kind of text it is."""

    text: str
    # "gbnf", "lark", "json" (llguidance's own compiled-schema grammar), "regex" (outlines)
    # or "ebnf" (XGrammar's)
    language: str
    compiler: str
    backend: str


def backend_grammar(compiled: CompiledSchema, backend: str) -> Grammar:
    """Exactly what `backend` runs for `compiled`, as make_backend's backends read it.

    Raises GrammarError when llguidance cannot translate the GBNF.
    """
    if compiled.kind == "llguidance":
        # llguidance's compiler hands the schema itself to llguidance, which builds the
        # rules inside; the same JSON, pretty-printed. Only the llguidance backend runs it.
        text = json.dumps(json.loads(compiled.grammar_text), indent=2) + "\n"
        return Grammar(text, "json", compiled.compiler, "llguidance")
    if compiled.kind in _NATIVE:  # the engine's own text, which only its backend runs
        return Grammar(compiled.grammar_text, _NATIVE[compiled.kind], compiled.compiler, backend)
    if backend == "llguidance":
        return Grammar(lark_text(compiled.gbnf), "lark", compiled.compiler, backend)
    if backend == "xgrammar":
        return Grammar(xgrammar_gbnf(compiled.gbnf), "gbnf", compiled.compiler, backend)
    return Grammar(compiled.gbnf, "gbnf", compiled.compiler, backend)
