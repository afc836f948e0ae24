"""How a run ends, and what its verdict says: finish reasons, and shape without truth."""

from __future__ import annotations

import json

import pytest

from engine.grammar.compile import CompiledSchema, compile_schema
from engine.grammar.compilers.llamacpp.converter import port_gbnf
from engine.model.llama import Model
from engine.records import FinishReason, StepRecord
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings

BACKENDS = ["llguidance", "llamacpp"]
FINISHED = (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)


def _greedy(backend: str) -> GenerationSettings:
    return GenerationSettings(backend=backend, temperature=0.0, max_tokens=40)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_finish_reasons_are_told_apart(model: Model, person, backend: str) -> None:
    # The grammar ends it: an enum's value has no trailing space, so once it is written
    # only an end token is allowed, and the run stops without drawing one.
    records: list[StepRecord] = []
    enum = compile_schema('{"enum": ["USD", "EUR"]}')
    by_grammar = run_to_end(model, enum, "Currency:", _greedy(backend), records.append)
    assert by_grammar.finish_reason is FinishReason.GRAMMAR_COMPLETE
    assert by_grammar.valid and not model.is_eog(records[-1].token_id)

    # The model ends it: after the object a space is valid too, and the model prefers
    # <eos> (0.73 against 0.27 after renormalising). llama-cpp-python's port of the
    # converter, pinned: it allows a space after the `}`, where ours and llama-server's leave
    # only the end token (and so end by GRAMMAR_COMPLETE, which would not tell the two
    # reasons apart).
    ex, _ = person
    schema = json.loads(ex.schema_text)
    compiled = CompiledSchema(schema, port_gbnf(schema), ex.schema_text, compiler="llamacpp")
    records.clear()
    by_model = run_to_end(model, compiled, ex.prompt, _greedy(backend), records.append)
    assert by_model.finish_reason is FinishReason.END_OF_GENERATION
    last = records[-1]
    assert by_model.valid and model.is_eog(last.token_id)
    assert any(not model.is_eog(c.id) for c in last.top_masked)  # it had another choice


def test_a_grammar_that_allows_no_token_ends_the_run_with_an_error(model: Model) -> None:
    # llama.cpp never allows a token whose text is a NUL byte, so a string that must hold
    # one has nowhere to go after its opening quote. The converter's grammar, pinned: it
    # asks for the raw NUL byte.
    schema = json.dumps({"type": "string", "pattern": "^\\x00$"})
    result = run_to_end(model, compile_schema(schema, "llamacpp"), "JSON:", _greedy("llamacpp"))
    assert result.finish_reason is FinishReason.ERROR
    assert result.message == "the grammar allows no token at all here"
    assert result.text == '"' and not result.valid


def test_our_compiler_writes_a_nul_as_its_json_escape(model: Model) -> None:
    # Our grammar writes the NUL as \u0000, which JSON allows and tokens can spell.
    schema = json.dumps({"type": "string", "pattern": "^\\x00$"})
    result = run_to_end(model, compile_schema(schema, "maskscope"), "JSON:", _greedy("llamacpp"))
    assert result.finish_reason is FinishReason.GRAMMAR_COMPLETE, result.message
    assert result.text == '"\\u0000"' and result.valid


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_output_that_parses_but_breaks_an_unenforced_keyword_is_invalid(
    model: Model, backend: str
) -> None:
    # Shape, not truth: the grammar reads `minimum` and drops `exclusiveMinimum`, and it
    # writes integers of at most 16 digits, so the count always parses and never gets past
    # this exclusive minimum.
    schema = {
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 0, "exclusiveMinimum": 10**16}},
        "required": ["count"],
        "additionalProperties": False,
    }
    # The converter's grammar, pinned: ours enforces the minimum.
    assert compile_schema(json.dumps(schema), "maskscope").unenforced == ()
    compiled = compile_schema(json.dumps(schema), "llamacpp")
    assert [u.keyword for u in compiled.unenforced] == ["exclusiveMinimum"]  # the user is told
    result = run_to_end(model, compiled, "How many stars are there?\nJSON:", _greedy(backend))
    assert result.finish_reason in FINISHED, result.message
    assert result.parse_error is None and isinstance(result.parsed["count"], int)
    assert not result.valid
    assert [e.path for e in result.errors] == ["$.count"]
    assert "is less than or equal to the minimum of 10000000000000000" in result.errors[0].message
    verdict = result.to_json()
    assert verdict["valid"] is False and verdict["errors"][0]["path"] == "$.count"
