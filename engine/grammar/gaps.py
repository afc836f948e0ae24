"""What a compiler would leave unenforced in a schema, without building its grammar: each
compiler's own report, minus the work a run needs (llama.cpp's judge of the GBNF, XGrammar's
compile, outlines-core's regex in a child). For a question asked often and cheaply: would
this edit of the schema be enforced by the chosen compiler?"""

from __future__ import annotations

from typing import Any

from engine.errors import MaskscopeError
from engine.grammar.llamacpp_coverage import unenforced_keywords as llamacpp_gaps
from engine.grammar.llguidance_compiler import compile_llguidance
from engine.grammar.maskscope.compiler import compile_to_gbnf
from engine.grammar.outlines_compiler import outlines_unenforced
from engine.grammar.report import Unenforced
from engine.grammar.xgrammar_coverage import unenforced_keywords as xgrammar_gaps


def gaps_of(schema: Any, compiler: str) -> tuple[Unenforced, ...] | None:
    """The keywords `compiler` would not enforce in `schema`; None when it refuses the
    schema or the compiler is unknown."""
    try:
        if compiler == "maskscope":
            return compile_to_gbnf(schema).unenforced
        if compiler == "llguidance":
            return compile_llguidance(schema)[1]
        reports = {
            "llamacpp": llamacpp_gaps,
            "xgrammar": xgrammar_gaps,
            "outlines": outlines_unenforced,
        }
        report = reports.get(compiler)
        return None if report is None else tuple(report(schema))
    except MaskscopeError:
        return None
