"""XGrammar as vLLM runs it: its own compiler (with vLLM's options) and its GrammarMatcher as
a mask backend, on the real engine. Its report of what it does not enforce is held against
what the engine really accepts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xgrammar as xgr

from engine.check.verdict import explanation, schema_errors
from engine.cli.main import main
from engine.errors import GrammarError
from engine.examples import load_example
from engine.grammar.compile import compile_schema
from engine.grammar.compilers.xgrammar.compiler import VLLM_OPTIONS
from engine.masking import make_backend
from engine.masking.grammar_text import backend_grammar

# Each keyword the report names beside an instance that breaks only it: XGrammar accepts it.
GAPS = [
    ({"type": "string", "pattern": "^a+$", "maxLength": 2}, '"aaa"', "maxLength"),
    ({"type": "string", "format": "date", "maxLength": 3}, '"2020-01-01"', "maxLength"),
    ({"type": "string", "pattern": "^(?=b)a+$"}, '"aaa"', "pattern"),
    ({"type": "string", "format": "regex"}, '"("', "format"),
    ({"not": {"type": "integer"}}, "1", "not"),
    ({"if": {"type": "integer"}, "then": {"minimum": 5}}, "1", "if"),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, "1", "oneOf"),
    ({"allOf": [{"type": "integer"}, {"minimum": 5}]}, "1.5", "allOf"),
    ({"$defs": {"x": {"type": "integer"}}, "$ref": "#/$defs/x", "minimum": 5}, "1", "minimum"),
    ({"type": "object", "required": ["a"]}, "{}", "required"),
    ({"type": "object", "properties": {"b": {}}, "required": ["a"]}, '{"b":1}', "required"),
    ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "[1,1]", "uniqueItems"),
    ({"type": "array", "items": {}, "contains": {"minimum": 5}}, "[1]", "contains"),
    ({"type": "number", "multipleOf": 0.5}, "0.3", "multipleOf"),
    ({"enum": ["a", "b"], "type": "string", "maxLength": 0}, '"a"', "maxLength"),
    ({"const": "a", "type": "integer"}, '"a"', "type"),
    # No `type` and nothing that makes XGrammar build an object or an array: any value.
    ({"minimum": 5}, "1", "minimum"),
    ({"format": "email"}, '"x"', "format"),
    # The first of anyOf, oneOf, allOf decides; the keywords beside it are dropped.
    ({"type": "integer", "anyOf": [{"minimum": 0}]}, "1.5", "type"),
    ({"type": "integer", "minimum": 3, "oneOf": [{"type": "integer"}]}, "1", "minimum"),
    ({"anyOf": [{"type": "integer"}], "allOf": [{"minimum": 5}]}, "1", "allOf"),
    # A $ref XGrammar cannot follow as a pointer from the root: what it names goes unchecked.
    ({"$ref": "#a", "$defs": {"x": {"$anchor": "a", "type": "integer"}}}, '"s"', "type"),
    (
        {
            "$id": "http://e.com/root",
            "$ref": "#/$defs/inner",
            "$defs": {
                "t": {"type": "string"},
                "inner": {
                    "$id": "http://e.com/inner",
                    "$ref": "#/$defs/t",  # jsonschema: inner's t; XGrammar: the root's t
                    "$defs": {"t": {"type": "integer"}},
                },
            },
        },
        '"s"',
        "type",
    ),
    (
        {"$defs": {"x": {"$dynamicAnchor": "x", "type": "integer"}}, "$dynamicRef": "#x"},
        '"s"',
        "$dynamicRef",
    ),
    (
        {"type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}},
        '{"a":1}',
        "dependentRequired",
    ),
    (
        {
            "type": "object",
            "properties": {"a": {}, "b": {}},
            "dependentSchemas": {"a": {"required": ["b"]}},
        },
        '{"a":1}',
        "dependentSchemas",
    ),
    ({"if": {"type": "integer"}, "then": False}, "1", "false"),  # jsonschema names no keyword
    ({"type": "integer", "multipleOf": 1.5}, "1", "multipleOf"),
    (
        {
            "type": "object",
            "properties": {"foo": {"type": "integer"}},
            "patternProperties": {"f.o": {}},
        },
        '{"foo":"a"}',
        "properties",
    ),
    # Format grammars looser than the format's rules.
    ({"type": "string", "format": "date"}, '"2021-02-30"', "format"),
    ({"type": "string", "format": "date-time"}, '"2021-02-30T12:00:00Z"', "format"),
    ({"type": "string", "format": "time"}, '"12:00:60Z"', "format"),
    ({"type": "string", "format": "ipv4"}, '"01.2.3.4"', "format"),
    ({"type": "string", "format": "ipv6"}, '"::ffff:1.2.3.04"', "format"),
    ({"type": "string", "format": "hostname"}, '"' + "a" * 64 + '.com"', "format"),
]
# Keywords it enforces, each beside an instance that breaks it: rejected, and not reported.
ENFORCED = [
    ({"type": "integer", "minimum": 3}, "2"),
    ({"type": "number", "exclusiveMinimum": 1.5}, "1.5"),
    ({"type": "integer", "multipleOf": 3}, "4"),
    ({"type": "string", "minLength": 3}, '"ab"'),
    ({"type": "string", "format": "email"}, '"nope"'),
    ({"type": "object", "additionalProperties": True, "maxProperties": 1}, '{"a":1,"b":2}'),
    (
        {"type": "object", "additionalProperties": True, "propertyNames": {"maxLength": 1}},
        '{"ab":1}',
    ),
    ({"type": "object", "properties": {"a": {}}, "required": ["a"]}, "{}"),
    ({"anyOf": [{"type": "integer", "minimum": 5}, {"type": "string"}]}, "1"),
    ({"allOf": [{"type": "object", "properties": {"a": {}}, "required": ["a"]}]}, "{}"),
    ({"type": "integer", "multipleOf": 3.0}, "4"),  # a whole multipleOf, written as a float
    ({"properties": {"a": {"type": "integer"}}}, '{"a":"x"}'),  # `properties`: an object
    ({"items": {"type": "integer"}, "maxItems": 1}, "[1,2]"),  # `items`: an array
    (
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "patternProperties": {"^z": {}},
        },
        '{"a":"x"}',
    ),
    ({"$defs": {"x": {"type": "integer"}}, "$ref": "#/$defs/x"}, '"s"'),
    ({"type": "string", "format": "uuid"}, '"2eb8aa08-aa98-11ea-b4aa-73b441d1638"'),
]


@pytest.fixture(scope="module")
def byte_compiler() -> xgr.GrammarCompiler:
    """XGrammar over a vocabulary of the 256 single bytes: a text is accepted exactly when
    the grammar takes it, whatever a model's tokenizer would have cut it into."""
    info = xgr.TokenizerInfo([bytes([i]) for i in range(256)], xgr.VocabType.RAW)
    return xgr.GrammarCompiler(info)


def _accepts(compiler: xgr.GrammarCompiler, schema: dict, text: str) -> bool:
    grammar = compiler.compile_grammar(compile_schema(json.dumps(schema), "xgrammar").native)
    matcher = xgr.GrammarMatcher(grammar, terminate_without_stop_token=True)
    return matcher.accept_string(text) and matcher.is_terminated()


@pytest.mark.parametrize(("schema", "text", "keyword"), GAPS)
def test_each_reported_gap_is_one_xgrammar_really_has(byte_compiler, schema, text, keyword):
    reported = {u.keyword for u in compile_schema(json.dumps(schema), "xgrammar").unenforced}
    assert keyword in reported
    assert _accepts(byte_compiler, schema, text)


@pytest.mark.parametrize(("schema", "text", "keyword"), GAPS)
def test_each_gap_explains_what_jsonschema_finds_wrong(schema, text, keyword):
    """As `check` judges it: every error jsonschema reports is explained by the report."""
    gaps = compile_schema(json.dumps(schema), "xgrammar").unenforced
    errors = schema_errors(json.loads(text), schema)
    assert errors and explanation(schema, errors, gaps)


@pytest.mark.parametrize(("schema", "text"), ENFORCED)
def test_what_xgrammar_enforces_is_not_reported(byte_compiler, schema, text):
    assert compile_schema(json.dumps(schema), "xgrammar").unenforced == ()
    assert not _accepts(byte_compiler, schema, text)


def test_the_grammar_is_the_one_vllm_compiles():
    text = load_example("order").schema_text
    compiled = compile_schema(text, "xgrammar")
    vllm = xgr.Grammar.from_json_schema(text, any_whitespace=True)  # vLLM's call, defaults
    assert compiled.kind == "xgrammar" and compiled.native == str(vllm)
    assert VLLM_OPTIONS == {"any_whitespace": True, "strict_mode": True}
    grammar = backend_grammar(compiled, "xgrammar")
    assert (grammar.text, grammar.language) == (compiled.native, "ebnf")


def test_a_schema_xgrammar_refuses_is_its_own_message_on_one_line(capfd):
    with pytest.raises(GrammarError) as refused:
        compile_schema('{"type": "integer", "minimum": 1.5}', "xgrammar")
    assert refused.value.message == (
        "XGrammar refuses the schema: Integer constraint must be a whole number"
    )
    assert capfd.readouterr().err == ""  # XGrammar's own log lines stay off the terminal


def test_an_engine_that_is_not_installed_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    # A fake: the suite installs XGrammar, so its absence can only be pretended, by hiding
    # the module from the lookup that decides whether it is there.
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xgrammar" else real(name)
    )
    line = "xgrammar is not installed: pip install 'maskscope[xgrammar]' (it brings torch)"
    with pytest.raises(GrammarError, match="not installed"):
        compile_schema("{}", "xgrammar")
    schema = tmp_path / "s.json"
    schema.write_text("{}")
    assert main(["lint", "--compiler", "xgrammar", "--backend", "xgrammar", str(schema)]) == 2
    err = capsys.readouterr()
    assert line in err.out + err.err
    assert "Traceback" not in err.out + err.err


@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["xgrammar", "maskscope", "llamacpp"])
def test_generate_runs_valid_on_the_xgrammar_backend(compiler, capsys):
    argv = ["generate", "--example", "currency", "--compiler", compiler, "--backend", "xgrammar"]
    code = main([*argv, "--temperature", "0", "--max-tokens", "24", "--jsonl"])
    captured = capsys.readouterr()
    result = json.loads(captured.out.splitlines()[-1])["result"]
    assert code == 0, result
    assert result["valid"] is True and json.loads(result["text"])["currency"]


@pytest.mark.slow
def test_check_runs_an_example_on_the_xgrammar_pair(capsys, tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 1}, "t": {"type": "string"}},
        "required": ["n"],
    }))  # fmt: skip
    instances = tmp_path / "s.jsonl"
    instances.write_text(
        '{"valid": true, "data": {"n": 2, "t": "x"}}\n{"valid": false, "data": {"n": 0}}\n'
    )
    argv = ["check", "--json", "--compiler", "xgrammar", "--backend", "xgrammar"]
    assert main([*argv, "--instances", str(instances), str(schema)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["valid_ok"], result["invalid_rej"], result["unexplained"]) == (1, 1, 0)


@pytest.mark.slow
def test_maskscopes_grammar_on_xgrammar_allows_what_llguidance_does_and_never_a_dead_end(model):
    """Maskscope's GBNF on XGrammar, along a real run: every token llguidance allows,
    XGrammar allows too. XGrammar also allows other spellings of forced text (`cur` inside
    `"currency"`), which llguidance leaves to the canonical token; after each of those the
    grammar still goes on. (Before `ws-never` was rewritten for XGrammar, the NUL byte
    passed here and nothing could follow it.)"""
    compiled = compile_schema(load_example("currency").schema_text, "maskscope")
    xg, llg = make_backend("xgrammar", model, compiled), make_backend("llguidance", model, compiled)
    probe = make_backend("xgrammar", model, compiled)
    tokens = model.tokenize('{ "currency": "EUR" }', add_special=False)
    for n, token in enumerate([*tokens, None]):
        a, b = xg.full_mask(), llg.full_mask()
        assert not (b & ~a).any()
        for extra in np.flatnonzero(a & ~b):
            probe.reset()
            for earlier in tokens[:n]:
                probe.accept(earlier)
            probe.accept(int(extra))
            assert probe.full_mask().any(), (n, model.piece(int(extra)))
        if token is not None:
            xg.accept(token)
            llg.accept(token)
    assert xg.full_mask()[model.eog_ids].any()


def test_gbnf_hex_escapes_mean_on_xgrammar_what_they_mean_on_llama_cpp(byte_compiler):
    """GBNF's `\\xHH` takes two hex digits, XGrammar's `\\x` all that follow: unrewritten,
    `"\\x41B"` was U+041B to XGrammar and `[\\x2D0-9]` an inverted range it refused (14 of
    the 593 MaskBench dev grammars Maskscope writes, among them a bundled bench schema)."""
    from engine.masking.xgrammar import xgrammar_gbnf

    def accepts(gbnf: str, text: str) -> bool:
        matcher = xgr.GrammarMatcher(
            byte_compiler.compile_grammar(xgrammar_gbnf(gbnf)), terminate_without_stop_token=True
        )
        return matcher.accept_string(text) and matcher.is_terminated()

    assert accepts(r'root ::= "\x41B"', "AB")
    assert accepts(r"root ::= [\x2D0-9]+", "-5")
    assert accepts(r'root ::= "\\x41"', "\\x41")  # an escaped backslash, then plain text
    bench = (Path(__file__).parents[2] / "resources/bench/Github_hard---o27023.json").read_text()
    byte_compiler.compile_grammar(xgrammar_gbnf(compile_schema(bench, "maskscope").gbnf))
