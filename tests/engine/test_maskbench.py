"""Real-world schemas from MaskBench: validation, generation, and the converter's failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.decode.loop import run_to_end
from engine.errors import GrammarError
from engine.grammar.compile import compile_schema
from engine.schema.validate import validation_issues
from engine.settings import GenerationSettings

DATA = Path(__file__).resolve().parents[1] / "data" / "maskbench"
ENFORCED = [
    "BFCL_java_10",
    "BFCL_multiple_44",
    "BFCL_parallel_multiple_62",
    "Github_easy---o79427",
    "Glaiveai2K---calculate_area_16ecbdde",
    "JME_41",
    "WashingtonPost---wp_44_Normalized",
    "WashingtonPost---wp_89_Normalized",
]
PROMPT = "Produce a realistic JSON example of the following kind of record.\nJSON:"


def _load(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ENFORCED)
def test_instances_are_judged_as_maskbench_says(name):
    case = _load(name)
    for test in case["tests"]:
        assert (not validation_issues(test["data"], case["schema"])) == test["valid"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, backend",
    [(n, "llguidance") for n in ENFORCED[::2]] + [(n, "llamacpp") for n in ENFORCED[1::2]],
)
def test_generated_output_validates(model, name, backend):
    compiled = compile_schema(json.dumps(_load(name)["schema"]))
    assert compiled.unenforced == ()  # the premise: the grammar enforces every keyword
    settings = GenerationSettings(backend=backend, temperature=0.0, max_tokens=200)
    result = run_to_end(model, compiled, PROMPT, settings)
    assert not result.truncated, result.text
    assert result.valid, (result.text, result.parse_error, result.errors)


def test_converter_failure_is_a_message():
    with pytest.raises(GrammarError, match="converter failed: Unrecognized schema"):
        compile_schema(json.dumps(_load("Github_hard---o77264")["schema"]))


def test_grammar_llama_cpp_rejects_carries_its_reason():
    # The converter turns this schema's pattern into GBNF that llama.cpp's parser refuses.
    with pytest.raises(
        GrammarError, match=r"llama\.cpp rejected the grammar: unknown escape"
    ) as info:
        compile_schema(json.dumps(_load("JsonSchemaStore---winget-pkgs-locale-1.0.0")["schema"]))
    assert "error parsing grammar" in info.value.detail


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["Github_ultra---o65323", "JME_1", "WashingtonPost---wp_94_Normalized"]
)
def test_schemas_llguidance_once_refused_now_run(model, name):
    compiled = compile_schema(json.dumps(_load(name)["schema"]))
    settings = GenerationSettings(backend="llguidance", temperature=0.0, max_tokens=40)
    result = run_to_end(model, compiled, PROMPT, settings)
    assert result.n_tokens > 0 and not result.message.startswith("llguidance"), result.message


def test_schema_that_crashed_llama_cpp_parser_gets_a_message():
    # maxLength: 65535 used to overflow llama.cpp's recursive parser and kill the process;
    # now the only failure left is the converter's `\w` escape, as a message.
    with pytest.raises(GrammarError, match="unknown escape"):
        compile_schema(json.dumps(_load("Github_medium---o42606")["schema"]))
