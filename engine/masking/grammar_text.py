"""The grammar text each backend really runs for a compiled schema, for people to read."""

from __future__ import annotations

import json
from dataclasses import dataclass

from engine.grammar.compile import CompiledSchema
from engine.masking.llguidance import lark_text


@dataclass(frozen=True, slots=True)
class Grammar:
    """The grammar one backend runs, as text, and what kind of text it is."""

    text: str
    # "gbnf", "lark", "json" (llguidance's own compiled-schema grammar) or "regex" (outlines)
    language: str
    compiler: str
    backend: str


def backend_grammar(compiled: CompiledSchema, backend: str) -> Grammar:
    """Exactly what `backend` runs for `compiled`, as make_backend's backends read it.

    Raises GrammarError when llguidance cannot translate the GBNF.
    """
    if compiled.llguidance_grammar is not None:
        # llguidance's compiler hands the schema itself to llguidance, which builds the
        # rules inside; the same JSON, pretty-printed. Only the llguidance backend runs it.
        text = json.dumps(json.loads(compiled.llguidance_grammar), indent=2) + "\n"
        return Grammar(text, "json", compiled.compiler, "llguidance")
    if compiled.outlines_regex is not None:  # one pattern, which only outlines-core runs
        return Grammar(compiled.outlines_regex, "regex", compiled.compiler, "outlines")
    if backend == "llguidance":
        return Grammar(lark_text(compiled.gbnf), "lark", compiled.compiler, backend)
    return Grammar(compiled.gbnf, "gbnf", compiled.compiler, backend)
