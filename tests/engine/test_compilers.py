"""compile_schema's three compilers, and which backend runs each one's grammar."""

from __future__ import annotations

import json

import pytest
from llguidance import LLMatcher

from engine.check.feed import feed_text
from engine.errors import GrammarError, SchemaInvalidError
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.llguidance.compiler import _gaps
from engine.masking import make_backend

MULTIPLE_OF_3 = '{"type": "integer", "multipleOf": 3}'


def _accepts(model, compiled, text: str, backend: str = "llguidance") -> bool:
    mask = make_backend(backend, model, compiled)
    try:
        return feed_text(model, mask, text).accepted
    finally:
        mask.close()


def test_unknown_compiler_is_refused_by_name():
    with pytest.raises(GrammarError, match="unknown compiler 'vllm'; choose one of maskscope"):
        compile_schema(MULTIPLE_OF_3, "vllm")


def test_llguidance_compiler_gives_its_own_grammar_and_no_gbnf():
    compiled = compile_schema(MULTIPLE_OF_3, "llguidance")
    assert (compiled.compiler, compiled.gbnf, compiled.unenforced) == ("llguidance", "", ())
    assert compiled.native
    assert LLMatcher.validate_grammar(compiled.native) == ""


def test_llguidance_backend_runs_the_llguidance_compilers_grammar(model):
    # llama.cpp's converter skips multipleOf, so only llguidance's own grammar rejects 4.
    ours = compile_schema(MULTIPLE_OF_3, "llguidance")
    assert _accepts(model, ours, "9") and not _accepts(model, ours, "4")
    theirs = compile_schema(MULTIPLE_OF_3, "llamacpp")
    assert _accepts(model, theirs, "4")
    assert [g.keyword for g in theirs.unenforced] == ["multipleOf"]  # the converter's report


@pytest.mark.parametrize("backend", ["llguidance", "llamacpp"])
def test_maskscope_compilers_gbnf_runs_on_both_backends(model, backend):
    compiled = compile_schema(MULTIPLE_OF_3, "maskscope")
    assert (compiled.compiler, compiled.native, compiled.unenforced) == (
        "maskscope",
        None,
        (),
    )
    assert _accepts(model, compiled, "9", backend) and not _accepts(model, compiled, "4", backend)


def test_llamacpp_backend_refuses_the_llguidance_compilers_grammar(model):
    compiled = compile_schema(MULTIPLE_OF_3, "llguidance")
    with pytest.raises(GrammarError, match="runs on the llguidance backend only"):
        make_backend("llamacpp", model, compiled)


def test_llguidance_refusal_carries_its_reason():
    schema = json.dumps({"type": "array", "items": {"not": {"type": "string"}}})
    with pytest.raises(GrammarError, match=r'refused the schema: Unimplemented keys: \["not"\]'):
        compile_schema(schema, "llguidance")


def test_a_bad_schema_fails_before_any_compiler():
    with pytest.raises(SchemaInvalidError):
        compile_schema('{"type": "integer", "minimum": "zero"}', "llguidance")


def test_llguidance_warnings_become_unenforced_keywords():
    # In lenient mode llguidance turns what strict mode refuses into warnings; their wording
    # is what _gaps reads, so take it from llguidance itself.
    schema = {"type": "array", "uniqueItems": True, "items": {"type": "string", "format": "x"}}
    grammar = LLMatcher.grammar_from_json_schema(schema, defaults={"lenient": True})
    is_error, warnings = LLMatcher.validate_grammar_with_warnings(grammar)
    assert not is_error
    gaps = [gap for warning in warnings for gap in _gaps(warning)]
    assert sorted((g.path, g.keyword) for g in gaps) == [("$", "format"), ("$", "uniqueItems")]
    assert any("format x" in g.note for g in gaps)
