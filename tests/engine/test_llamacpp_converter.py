"""The `llamacpp` compiler is llama-server's own converter: the C++ one in
common/json-schema-to-grammar.cpp, compiled by `make setup` from the sdist llama-server is
built from (engine/llama_build/converter.py), and held here to the real llama-server.

- The GBNF it makes is, character for character, what llama-server makes of the same
  `json_schema` (the server returns it in `generation_settings.grammar`), on every bundled
  example, every MaskBench schema in tests/data and a set that takes each branch of the
  converter; a schema one refuses, the other refuses too.
- Integer bounds, which llama-cpp-python's old Python port dropped, are enforced: the grammar
  refuses 2 and 18 for [3, 17], llama-server's samples stay inside, and the engines report
  no longer lists them.
- coverage.py's mirror of the converter's pattern scan agrees with the converter's own
  warnings on every pattern of the test data and on random ones.
- Where the converter is not built, the Python port stands in, and says so.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import engine.grammar.compilers.llamacpp.converter as converter_module
from engine.check.inputs import FileInstance, SchemaCase
from engine.check.run import check_case
from engine.engines.report import engines_report
from engine.engines.targets import target
from engine.errors import GrammarError
from engine.grammar.compilers.llamacpp.converter import (
    converter_in_use,
    native_warnings,
    schema_to_gbnf,
)
from engine.grammar.compilers.llamacpp.coverage import unenforced_keywords
from engine.grammar.compilers.llamacpp.patterns import (
    InvalidPattern,
    UnsupportedPattern,
    check_pattern,
)
from engine.llama_build import converter as build
from engine.suite.server.client import HttpRefusal, ServerClient

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
BOUNDED = {"type": "integer", "minimum": 3, "maximum": 17}
# One schema down each branch of build_node (common/json-schema.cpp) and the converter.
BRANCHES = [
    BOUNDED,
    {"type": "integer", "exclusiveMinimum": -5.5, "exclusiveMaximum": 1000},
    {"type": "integer", "minimum": -40},
    {"type": "integer", "maximum": 99},
    {"type": "number", "minimum": 0.5, "multipleOf": 2},
    {"type": ["string", "null"], "maxLength": 4},
    {"type": ["integer", "boolean"], "minimum": 1, "maximum": 2},
    {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3,5}$"},
    {"type": "string", "pattern": "^(?=.*[0-9])[A-Z0-9]{4}$"},
    {"type": "string", "pattern": "^\\d+\\.\\d+$"},
    {"type": "string", "pattern": "^https?://.+$"},
    {"type": "string", "format": "date-time", "maxLength": 3},
    {"type": "string", "format": "uuid"},
    {"type": "string", "format": "email", "minLength": 5},
    {"type": "string", "allOf": [{"minLength": 1}]},
    {"type": "array", "items": {"type": "integer", "maximum": 5}, "minItems": 1, "maxItems": 3},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "maxItems": 4},
    {"items": [{"const": 1}, {"enum": ["a", None]}]},
    {"type": "object", "required": ["x"]},
    {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
    {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "integer", "minimum": 1, "maximum": 9},
    },
    {"allOf": [{"properties": {"a": {"type": "integer"}}}, {"properties": {"b": {"enum": [1]}}}]},
    {"oneOf": [{"type": "integer", "maximum": 0}, {"type": "string"}], "anyOf": [{}]},
    {
        "$defs": {"n": {"type": "integer", "minimum": 10}},
        "properties": {"n": {"$ref": "#/$defs/n"}},
    },
    {"enum": ["a", 1, None, {"b": [2]}]},
    {"const": {"k": "v"}},
    {"minimum": 3},
    {"title": "annotations only"},
]
REFUSED = [
    {"type": "object", "properties": {"error": True}},
    {"type": "string", "pattern": "^(ab$"},
    {"type": "strng"},
    {"$ref": "#"},
]


def _schemas() -> list[object]:
    examples = sorted((ROOT / "resources" / "examples").glob("*.schema.json"))
    maskbench = sorted((DATA / "maskbench").glob("*.json"))
    return (
        [json.loads(p.read_text(encoding="utf-8")) for p in examples]
        + [json.loads(p.read_text(encoding="utf-8"))["schema"] for p in maskbench]
        + BRANCHES
    )


def _servers_grammar(url: str, schema: object) -> tuple[int, str]:
    """What llama-server made of `schema` as `json_schema`: (200, its GBNF) or (status,
    its error message)."""
    body = {"prompt": "JSON:", "json_schema": schema, "n_predict": 1, "temperature": 0}
    try:
        reply = ServerClient(url, retries=0).post("/completion", body)
    except HttpRefusal as refusal:
        return refusal.status, refusal.message
    return 200, reply.data["generation_settings"]["grammar"]


@pytest.mark.slow
def test_our_grammar_is_llama_servers_character_for_character(llama_server):
    assert converter_in_use().native, f"the converter is not built: `{build.BUILD_COMMAND}`"
    schemas = _schemas()
    assert len(schemas) > 60
    for schema in schemas:
        status, theirs = _servers_grammar(llama_server, schema)
        assert status == 200, (schema, theirs)
        assert schema_to_gbnf(schema) == theirs, json.dumps(schema)[:200]


@pytest.mark.slow
def test_a_schema_the_server_refuses_we_refuse(llama_server):
    for schema in REFUSED:
        status, said = _servers_grammar(llama_server, schema)
        assert status == 400, schema
        with pytest.raises(GrammarError) as info:
            schema_to_gbnf(schema)
        assert "converter failed" in info.value.message
        # the converter's own words, as the server gives them
        reason = info.value.message.split("converter failed: ")[-1]
        assert reason.split(": ")[-1] in said, (reason, said)


@pytest.mark.slow
def test_an_empty_schema_is_any_value_here_and_an_object_on_the_server(llama_server):
    # llama-server narrows exactly `{}` to {"type": "object"} before converting
    # (server-schema.cpp); Maskscope keeps it any JSON value (docs/architecture.md).
    _, theirs = _servers_grammar(llama_server, {})
    assert theirs == schema_to_gbnf({"type": "object"})
    assert "root ::= value" in schema_to_gbnf({})


@pytest.mark.slow
def test_llama_server_keeps_integers_inside_their_bounds(llama_server):
    # The prompt asks for a number the bounds forbid; each sample still lands in [3, 17].
    client = ServerClient(llama_server, retries=0)
    for seed in range(4):
        body = {"prompt": "A four-digit number: 4821, 9077,", "json_schema": BOUNDED,
                "n_predict": 4, "temperature": 1.0, "seed": seed}  # fmt: skip
        text = client.post("/completion", body).data["content"]
        assert 3 <= int(text.strip()) <= 17, text


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["llamacpp", "llguidance"])
def test_our_grammar_refuses_integers_outside_their_bounds(model, backend):
    values = (2, 3, 10, 17, 18, -3, 170)
    case = SchemaCase("bounded.json", None, BOUNDED, tuple(FileInstance(v, None) for v in values))
    result = check_case(model, case, "llamacpp", backend)
    assert [v.accepted for v in result.verdicts] == [False, True, True, True, False, False, False]
    assert result.passed and result.unexplained == 0


@pytest.mark.slow
def test_what_the_converter_drops_lets_invalid_instances_through_and_is_reported(model):
    # minimum is read, exclusiveMinimum not (build_integer): 4 gets through, explained.
    both = {"type": "integer", "minimum": 3, "exclusiveMinimum": 5}
    result = check_case(
        model, SchemaCase("b.json", None, both, (FileInstance(4, None),)), "llamacpp", "llamacpp"
    )
    [four] = result.verdicts
    assert four.accepted and not four.valid
    assert [(g.path, g.keyword) for g in four.explained_by] == [("$", "exclusiveMinimum")]
    # The converter writes the pattern's `.` as [^\x0A\x0D], inside the string's quotes: the
    # string runs on past its closing quote and swallows a key the object forbids. Reported
    # as the pattern's gap; check cannot tie that gap to the additionalProperties error.
    url = {"type": "string", "pattern": "^a.+$"}
    closed = {"type": "object", "properties": {"u": url}, "required": ["u"],
              "additionalProperties": False}  # fmt: skip
    case = SchemaCase("r.json", None, closed, (FileInstance({"u": "ab", "x": "y"}, None),))
    [swallowed] = check_case(model, case, "llamacpp", "llamacpp").verdicts
    assert swallowed.accepted and not swallowed.valid and swallowed.unexplained
    [gap] = unenforced_keywords(closed)
    assert (gap.path, gap.keyword) == ("$.properties.u", "pattern") and "raw" in gap.note


def test_the_engines_report_no_longer_lists_integer_bounds_for_llama_cpp():
    schema = {
        "type": "object",
        "properties": {
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "score": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "price": {"type": "number", "minimum": 0},
        },
    }
    [cell] = engines_report(json.dumps(schema), [target("llamacpp")])
    assert cell.compiles and cell.engine == converter_in_use().label
    assert "C++, as llama-server runs it" in cell.engine
    assert {(u.path, u.keyword) for u in cell.unenforced} == {("$.properties.price", "minimum")}


def _patterns() -> list[str]:
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("pattern"), str):
                found.add(value["pattern"])
            for sub in value.values():
                walk(sub)
        elif isinstance(value, list):
            for sub in value:
                walk(sub)

    for folder in ("maskbench", "json-schema-test-suite", "suites"):
        for path in sorted((DATA / folder).rglob("*.json")):
            walk(json.loads(path.read_text(encoding="utf-8")))
    # Random ones made of what the scan treats apart, with and without anchors.
    rnd = random.Random(7)
    parts = [*'^$()[]{}*+?|.\\ax0,-:"dtu1', "\\x4", "\\u00", "(?:", "{2,3}", "{,", "[a-z]"]
    for _ in range(600):
        body = "".join(rnd.choice(parts) for _ in range(rnd.randint(0, 8)))
        found.add(body if rnd.random() < 0.1 else f"^{body}$")
    return sorted(found)


def _mirror(pattern: str) -> str:
    if not pattern:  # the converter reads an empty pattern as none (KIND_STRING's visit)
        return "converted"
    try:
        check_pattern(pattern)
    except UnsupportedPattern:
        return "unsupported"
    except InvalidPattern:
        return "invalid"
    return "converted"


def test_the_pattern_mirror_agrees_with_the_converters_warnings():
    binary = converter_in_use().binary
    assert binary is not None, f"the converter is not built: `{build.BUILD_COMMAND}`"
    patterns = _patterns()
    assert len(patterns) > 400
    kinds = set()
    for pattern in patterns:
        schema = {"type": "string", "pattern": pattern}
        try:
            real = "unsupported" if native_warnings(binary, schema) else "converted"
            converter_module.native_gbnf(binary, schema)
        except GrammarError:
            real = "invalid"
        kinds.add(real)
        assert _mirror(pattern) == real, pattern
        gaps = {u.keyword for u in unenforced_keywords(schema)}
        assert ("pattern" in gaps) >= (real == "unsupported"), pattern
    assert kinds == {"unsupported", "invalid", "converted"}


def test_where_the_converter_is_not_built_the_python_port_stands_in(monkeypatch):
    monkeypatch.setattr(converter_module, "cached_converter", lambda: None)
    used = converter_in_use()
    assert not used.native and used.binary is None
    assert "Python port" in used.label and build.BUILD_COMMAND in used.label
    # The port's grammar (its old whitespace) and the port's own report: no integer bounds.
    assert 'space ::= " "?' in schema_to_gbnf(BOUNDED)
    assert {u.keyword for u in unenforced_keywords(BOUNDED)} == {"minimum", "maximum"}
    [cell] = engines_report(json.dumps(BOUNDED), [target("llamacpp")])
    assert cell.engine == used.label


def test_a_cached_converter_that_fails_its_proof_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "cache_dir", lambda: tmp_path)
    broken = build.converter_dir() / build.BINARY
    broken.parent.mkdir(parents=True)
    broken.write_text('#!/bin/sh\necho "root ::= integer"\n', encoding="utf-8")
    broken.chmod(0o755)
    assert "did not convert the proof schema" in build.proof_failure(broken)
    built: list[bool] = []

    def compiled() -> Path:  # a stand-in for a real 30 s compile, which says what it must
        assert not broken.exists()  # the failing one went first
        built.append(True)
        fixed = broken.with_name("fixed")
        fixed.write_text(f"#!/bin/sh\nprintf '%s' '{build.PROOF_GBNF}'\n", encoding="utf-8")
        fixed.chmod(0o755)
        return fixed

    monkeypatch.setattr(build, "build_converter", compiled)
    binary = build.ensure_converter()
    assert built == [True] and build.proof_failure(binary) is None


def test_the_real_converter_passes_its_proof():
    binary = build.cached_converter()
    assert binary is not None, f"the converter is not built: `{build.BUILD_COMMAND}`"
    assert build.proof_failure(binary) is None
