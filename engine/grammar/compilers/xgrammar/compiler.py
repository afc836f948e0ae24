"""XGrammar's own JSON Schema compiler, called as vLLM calls it.

vLLM's XGrammar backend (vllm/v1/structured_output/backend_xgrammar.py, `compile_grammar`)
compiles a JSON schema with `compile_json_schema(schema, any_whitespace=not
disable_any_whitespace)`: any whitespace (the default, `disable_any_whitespace` is False) and
XGrammar's own default `strict_mode=True`, which forbids properties and items the schema does
not name. SGLang's XGrammar backend passes the same. The grammar is kept as the EBNF text
`Grammar.from_json_schema` writes with those options; the xgrammar backend compiles it over
the model's vocabulary, which is what `compile_json_schema` does in one call.

XGrammar is an optional extra (it requires torch): without it, compiling is a GrammarError
whose message says how to install it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from engine.errors import GrammarError
from engine.grammar.compilers.xgrammar.coverage import unenforced_keywords
from engine.grammar.report import Unenforced
from engine.native_stderr import captured_stderr
from engine.settings import missing_engine

# vLLM's defaults (see above); strict_mode is XGrammar's own default, spelled out here.
VLLM_OPTIONS: dict[str, Any] = {"any_whitespace": True, "strict_mode": True}
# XGrammar's C++ messages start "[12:00:00] /project/cpp/json_schema_converter.cc:5082: ".
_LOG_PREFIX = re.compile(r"^\[[\d:]+\]\s+\S+:\d+:\s*")


def compile_xgrammar(schema: Any) -> tuple[str, tuple[Unenforced, ...]]:
    """XGrammar's EBNF for `schema`, and the keywords it does not enforce."""
    xgr = load_xgrammar()
    try:
        with captured_stderr():  # its warnings; the report below names each gap instead
            grammar = xgr.Grammar.from_json_schema(json.dumps(schema), **VLLM_OPTIONS)
    except Exception as exc:  # XGrammar raises RuntimeError/ValueError on what it refuses
        raise GrammarError(f"XGrammar refuses the schema: {engine_message(exc)}") from None
    return str(grammar), tuple(unenforced_keywords(schema))


def load_xgrammar() -> Any:
    """The xgrammar module; a GrammarError saying how to install it when it is missing."""
    if (missing := missing_engine("xgrammar")) is not None:
        raise GrammarError(missing)
    try:
        import xgrammar
    except Exception as exc:  # torch or a native library that does not load
        raise GrammarError(f"xgrammar does not load: {exc}") from None
    return xgrammar


def engine_message(exc: BaseException) -> str:
    """XGrammar's own words, without the C++ log prefix, on one line."""
    text = " ".join(str(exc).split())
    return _LOG_PREFIX.sub("", text) or type(exc).__name__
