"""The decode step takes its grammars from its caller: a compilers' cross-check gets the
other compiler's grammar passed in, and decoding never compiles one itself."""

from __future__ import annotations

import pytest

from engine.decode.loop import generate
from engine.errors import GrammarError
from engine.grammar.compile import compile_schema, cross_grammar
from engine.settings import GenerationSettings

SCHEMA = '{"type": "integer"}'
CROSSED = GenerationSettings(
    backend="llguidance", max_tokens=4, cross_check=True, cross_check_compiler="llguidance"
)


def test_a_compilers_cross_check_without_its_grammar_is_refused_before_a_step(model):
    compiled = compile_schema(SCHEMA, "llamacpp")
    settings = GenerationSettings(**{**CROSSED.to_json(), "compiler": "llamacpp"})
    with pytest.raises(GrammarError, match="needs that compiler's grammar"):
        next(generate(model, compiled, "n:", settings))


def test_the_grammar_passed_in_is_the_one_cross_checked(model):
    compiled = compile_schema(SCHEMA, "llamacpp")
    settings = GenerationSettings(**{**CROSSED.to_json(), "compiler": "llamacpp"})
    cross = cross_grammar(compiled, settings)
    assert cross is not None and cross.compiler == "llguidance"
    gen = generate(model, compiled, "n:", settings, cross=cross)
    record = next(gen)
    assert record.step == 0
    gen.close()


def test_no_cross_grammar_without_a_compilers_cross_check():
    compiled = compile_schema(SCHEMA, "llamacpp")
    assert cross_grammar(compiled, GenerationSettings(compiler="llamacpp")) is None


def test_decoding_calls_no_compiler():
    """engine/decode imports CompiledSchema, the type, and calls nothing of a compiler's."""
    import ast
    from pathlib import Path

    import engine.decode

    called = set()
    for path in Path(engine.decode.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                called.add(node.func.id)
    assert not called & {"compile_schema", "cross_grammar", "compile_to_gbnf", "schema_to_gbnf"}
