"""The outlines pair, run for real: outlines-core's compiler (a regex) on outlines-core's
Index/Guide backend over the default model's 262,144 tokens."""

from __future__ import annotations

import json
import re
import uuid

import numpy as np
import pytest

from engine.decode.loop import generate
from engine.errors import GrammarError
from engine.examples import load_example
from engine.grammar.compile import compile_schema
from engine.masking.base import make_backend
from engine.masking.outlines import index_for, vocabulary_for
from engine.settings import GenerationSettings
from tests.adversary import lone_byte_tokens


def _run(model, name: str):
    example = load_example(name)
    compiled = compile_schema(example.schema_text, "outlines")
    settings = example.settings(
        GenerationSettings(compiler="outlines", backend="outlines", temperature=0.0)
    )
    gen = generate(model, compiled, example.prompt, settings)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


@pytest.mark.parametrize("name", ["currency", "person"])
def test_bundled_example_runs_valid_on_the_outlines_pair(model, name):
    result = _run(model, name)
    assert result.valid, (result.finish_reason, result.text, result.message)


def test_no_lone_high_byte_after_the_opening_brace(model):
    byte_tokens = lone_byte_tokens(model)
    assert len(byte_tokens) == 128
    compiled = compile_schema(load_example("currency").schema_text, "outlines")
    backend = make_backend("outlines", model, compiled)
    for t in model.tokenize("{", add_special=False):
        backend.accept(t)
    mask = backend.full_mask()
    assert mask.any()  # the grammar goes on: the test looks at a live state
    allowed = [hex(b) for b, t in byte_tokens.items() if mask[t]]
    assert allowed == []


def test_known_unenforced_keywords_are_reported_and_truly_unenforced():
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 5}},
        "required": ["n"],
    }
    compiled = compile_schema(json.dumps(schema), "outlines")
    assert [(u.path, u.keyword) for u in compiled.unenforced] == [("$.properties.n", "minimum")]
    # The report is the truth: the regex does take a value below the minimum.
    assert re.fullmatch(compiled.native, '{"n":3}')


def test_one_of_is_reported_as_any_of():
    schema = {"oneOf": [{"type": "integer"}, {"type": "number"}]}
    compiled = compile_schema(json.dumps(schema), "outlines")
    assert ("$", "oneOf") in [(u.path, u.keyword) for u in compiled.unenforced]
    assert re.fullmatch(compiled.native, "1")  # matches both branches: invalid


def test_an_enum_that_fits_its_siblings_reports_nothing():
    compiled = compile_schema(load_example("currency").schema_text, "outlines")
    assert compiled.unenforced == ()


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": "string", "format": "ipv4"}, "Format ipv4 is not supported"),
        ({"type": "string", "pattern": "^(?=a)a+$"}, "cannot build the schema's regex"),
        ({"type": "array", "items": False}, "refused the schema"),
    ],
)
def test_a_schema_outlines_refuses_is_a_grammar_error(schema, words):
    with pytest.raises(GrammarError, match=re.escape(words)):
        compile_schema(json.dumps(schema), "outlines")


def test_an_index_past_its_time_limit_is_a_finding(model):
    vocab = vocabulary_for(model)
    regex = f'"{uuid.uuid4().hex}"[a-z]{{0,8}}'  # never cached: a build must start
    with pytest.raises(GrammarError, match=r"did not compile in 0\.001 s"):
        index_for(regex, vocab, limit_s=0.001)


def test_a_stopped_index_build_is_cancelled(model):
    from engine.model.llama import LoadCancelled

    vocab = vocabulary_for(model)
    regex = f'"{uuid.uuid4().hex}"[a-z]{{0,8}}'
    with pytest.raises(LoadCancelled):
        index_for(regex, vocab, should_stop=lambda: True)


def test_an_index_is_built_once_per_regex_and_vocabulary(model):
    vocab = vocabulary_for(model)
    regex = compile_schema(load_example("currency").schema_text, "outlines").native
    assert index_for(regex, vocab) is index_for(regex, vocab)


@pytest.mark.parametrize(
    ("compiler", "backend", "cross_check"),
    [
        ("outlines", "llguidance", False),
        ("outlines", "llamacpp", False),
        ("maskscope", "outlines", False),
        ("llguidance", "outlines", False),
        ("outlines", "outlines", True),
    ],
)
def test_pairings_outside_the_outlines_pair_are_refused(compiler, backend, cross_check):
    settings = GenerationSettings(compiler=compiler, backend=backend, cross_check=cross_check)
    assert settings.problem() is not None
    assert GenerationSettings(compiler="outlines", backend="outlines").problem() is None


def test_make_backend_refuses_a_grammar_it_cannot_run(model, currency):
    _, gbnf_compiled = currency
    with pytest.raises(GrammarError, match="outlines compiler's regex only"):
        make_backend("outlines", model, gbnf_compiled)
    regex_compiled = compile_schema(load_example("currency").schema_text, "outlines")
    with pytest.raises(GrammarError, match="outlines backend only"):
        make_backend("llguidance", model, regex_compiled)


def test_every_end_token_is_allowed_where_the_regex_may_end(model):
    compiled = compile_schema(json.dumps({"const": 1}), "outlines")
    backend = make_backend("outlines", model, compiled)
    for t in model.tokenize("1", add_special=False):
        backend.accept(t)
    mask = backend.full_mask()
    assert mask[model.eog_ids].all()
    assert np.flatnonzero(mask).tolist() == sorted(model.eog_ids.tolist())


def test_arrays_nested_past_the_limit_are_refused_before_outlines_core_runs_out_of_memory():
    """outlines-core's regex doubles with each nested array; about 26 levels aborted the
    whole process (a Rust allocation failure). Past 16 the compiler says so instead."""
    schema: dict = {"type": "integer"}
    for _ in range(17):
        schema = {"type": "array", "items": schema}
    wrapped = {"type": "object", "properties": {"items": {"type": "string"}, "deep": schema}}
    with pytest.raises(GrammarError, match="nests 17 levels"):
        compile_schema(json.dumps(wrapped), "outlines")


def test_arrays_nested_through_refs_count_too():
    defs = {f"d{i}": {"type": "array", "items": {"$ref": f"#/$defs/d{i + 1}"}} for i in range(17)}
    defs["d17"] = {"type": "integer"}
    recursive = {"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}
    with pytest.raises(GrammarError, match="nests 17 levels"):
        compile_schema(json.dumps({"$defs": defs, "$ref": "#/$defs/d0"}), "outlines")
    with pytest.raises(GrammarError) as recursion:  # outlines-core's own limit, not ours
        compile_schema(json.dumps({**recursive, "$ref": "#/$defs/t"}), "outlines")
    assert "nests" not in recursion.value.message
