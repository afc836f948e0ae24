"""llguidance's own JSON Schema compiler: what vLLM, SGLang and llguidance-enabled llama.cpp
users get.

It is run with llguidance's defaults (strict, not `lenient`), as those engines run it: a
keyword it cannot enforce (`not`, `uniqueItems`, `if`, an unknown `format`, ...) makes the
whole schema fail to compile rather than being dropped. So a grammar that compiles carries
no gaps of its own; the only report is the warnings llguidance itself attaches to the
grammar, which name no JSON path (they are reported at `$`). Its known departure from the
spec, a fixed property order, is one that `maskscope check` already writes instances for.
"""

from __future__ import annotations

import json
import re
from typing import Any

from llguidance import LLMatcher

from engine.errors import GrammarError
from engine.grammar.report import Unenforced

_UNIMPLEMENTED = re.compile(r"Unimplemented keys: \[(.*)\]")
_UNKNOWN_FORMAT = re.compile(r"Unknown format: (.+)")


def compile_llguidance(schema: Any) -> tuple[str, tuple[Unenforced, ...]]:
    """llguidance's grammar for `schema` and the gaps its warnings name.

    Raises GrammarError with llguidance's own first line when it refuses the schema.
    """
    try:
        grammar = LLMatcher.grammar_from_json_schema(json.dumps(schema))
    except ValueError as exc:  # only for arguments that are not JSON objects
        raise GrammarError("llguidance cannot read the schema", str(exc)) from None
    is_error, messages = LLMatcher.validate_grammar_with_warnings(grammar)
    if is_error:
        if "is not present in a registry" in messages[0]:  # llguidance fetches nothing either
            raise GrammarError("remote references are not supported", messages[0])
        raise GrammarError("llguidance's compiler refused the schema", messages[0])
    return grammar, tuple(gap for message in messages for gap in _gaps(message))


def _gaps(warning: str) -> list[Unenforced]:
    """One warning's unenforced keywords; a warning of another kind is kept whole."""
    first = warning.strip().splitlines()[0] if warning.strip() else warning
    keys = _UNIMPLEMENTED.fullmatch(first)
    if keys:
        names = [k.strip().strip('"') for k in keys.group(1).split(",") if k.strip()]
        return [Unenforced("$", name, "llguidance does not implement it") for name in names]
    fmt = _UNKNOWN_FORMAT.fullmatch(first)
    if fmt:
        return [Unenforced("$", "format", f"llguidance does not know format {fmt.group(1)}")]
    return [Unenforced("$", "(llguidance)", first)]
