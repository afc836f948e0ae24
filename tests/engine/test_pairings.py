"""Which compiler runs on which backend is one table (engine/settings.py); every place that
offers compilers and backends asks it: the settings, make_backend, the CLI and check's table."""

from __future__ import annotations

import argparse
import json

import pytest

from engine.cli.check import _pairs
from engine.cli.main import build_parser, main
from engine.errors import GrammarError
from engine.grammar.compile import CompiledSchema
from engine.masking.base import PLUGINS, make_backend
from engine.settings import (
    BACKENDS,
    COMPILERS,
    GenerationSettings,
    backends_for,
    pairing_problem,
    runs_on,
)

LLG_ONLY = (
    "the llguidance compiler's grammar runs on the llguidance backend only: "
    "choose the llguidance backend or another compiler"
)
REGEX_ONLY = (
    "the outlines compiler's regex runs on the outlines backend only: "
    "choose the outlines backend or another compiler"
)
OUTLINES_ONLY = (
    "the outlines backend runs the outlines compiler's regex only: "
    "choose the outlines compiler or another backend"
)
XGRAMMAR_ONLY = (
    "the xgrammar compiler's grammar runs on the xgrammar backend only: "
    "choose the xgrammar backend or another compiler"
)
# Every compiler x backend: None where it runs, else the one line the user reads.
TABLE = {
    ("maskscope", "llguidance"): None,
    ("maskscope", "llamacpp"): None,
    ("maskscope", "outlines"): OUTLINES_ONLY,
    ("maskscope", "xgrammar"): None,
    ("llamacpp", "llguidance"): None,
    ("llamacpp", "llamacpp"): None,
    ("llamacpp", "outlines"): OUTLINES_ONLY,
    ("llamacpp", "xgrammar"): None,
    ("llguidance", "llguidance"): None,
    ("llguidance", "llamacpp"): LLG_ONLY,
    ("llguidance", "outlines"): LLG_ONLY,
    ("llguidance", "xgrammar"): LLG_ONLY,
    ("outlines", "llguidance"): REGEX_ONLY,
    ("outlines", "llamacpp"): REGEX_ONLY,
    ("outlines", "outlines"): None,
    ("outlines", "xgrammar"): REGEX_ONLY,
    ("xgrammar", "llguidance"): XGRAMMAR_ONLY,
    ("xgrammar", "llamacpp"): XGRAMMAR_ONLY,
    ("xgrammar", "outlines"): XGRAMMAR_ONLY,
    ("xgrammar", "xgrammar"): None,
}
# A backends' cross-check needs a second backend that runs the same grammar.
CROSS = {
    ("maskscope", "llguidance"): None,
    ("maskscope", "llamacpp"): None,
    ("maskscope", "xgrammar"): None,
    ("llamacpp", "llguidance"): None,
    ("llamacpp", "llamacpp"): None,
    ("llamacpp", "xgrammar"): None,
    ("xgrammar", "xgrammar"): "cross-checking the backends needs a grammar both run, and "
    "the xgrammar compiler's runs on xgrammar only: cross-check another compiler instead",
    ("llguidance", "llguidance"): "cross-checking the backends needs a grammar both run, and "
    "the llguidance compiler's runs on llguidance only: cross-check another compiler instead",
    ("outlines", "outlines"): "the outlines compiler's regex runs on no other backend, and the "
    "outlines backend runs no other compiler's grammar: there is nothing to cross-check",
}


def test_the_table_covers_every_compiler_and_backend():
    assert set(TABLE) == {(c, b) for c in COMPILERS for b in BACKENDS}
    assert set(PLUGINS) == set(BACKENDS)


@pytest.mark.parametrize(("compiler", "backend"), list(TABLE))
def test_each_pairing_runs_or_is_refused_with_its_line(compiler, backend):
    expected = TABLE[compiler, backend]
    assert runs_on(compiler, backend) == (expected is None)
    assert pairing_problem(compiler, backend) == expected
    assert GenerationSettings(compiler=compiler, backend=backend).problem() == expected


@pytest.mark.parametrize(("compiler", "backend"), list(CROSS))
def test_a_backends_cross_check_needs_a_second_backend(compiler, backend):
    settings = GenerationSettings(compiler=compiler, backend=backend, cross_check=True)
    assert settings.problem() == CROSS[compiler, backend]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compilers_cross_check_is_judged_by_the_same_table(backend):
    for other in COMPILERS:
        own = next((c for c in COMPILERS if c != other and runs_on(c, backend)), None)
        if own is None:  # outlines on its backend: no other compiler to run there
            continue
        settings = GenerationSettings(
            compiler=own, backend=backend, cross_check=True, cross_check_compiler=other
        )
        assert settings.problem() == pairing_problem(other, backend), (own, other, backend)


@pytest.mark.parametrize(("compiler", "backend"), [k for k, v in TABLE.items() if v])
def test_make_backend_refuses_before_loading_anything(compiler, backend):
    compiled = CompiledSchema(True, "", "", compiler=compiler)
    with pytest.raises(GrammarError) as refused:
        make_backend(backend, None, compiled)  # type: ignore[arg-type]  # never reached
    assert refused.value.message == TABLE[compiler, backend]


@pytest.mark.parametrize("command", ["generate", "check", "lint"])
def test_every_command_offers_every_compiler_and_backend(command):
    p = build_parser()
    for compiler in COMPILERS:
        for backend in backends_for(compiler):
            argv = [command, "--compiler", compiler, "--backend", backend, "x.json"]
            if command == "generate":
                argv = [command, "--schema", "x.json", *argv[1:5]]
            args = p.parse_args(argv)
            assert (args.compiler, args.backend) == (compiler, backend)


def _args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**{"summary": True, "compare": False, "compiler": None,
                                 "backend": None, **given})  # fmt: skip


def test_check_summary_runs_only_pairs_that_run_and_says_which_it_skipped(capsys):
    pairs = _pairs(_args())
    assert pairs == [k for k, v in TABLE.items() if v is None]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("maskscope: skipped 11 pairings")
    assert "maskscope on outlines" in err and "outlines on llamacpp" in err
    assert _pairs(_args(backend="outlines")) == [("outlines", "outlines")]
    assert "skipped 4 pairings" in capsys.readouterr().err


def test_check_summary_with_no_pair_that_runs_says_why(capsys):
    code = main(["check", "--summary", "--compiler", "outlines", "--backend", "llamacpp", "x"])
    assert code == 2
    assert REGEX_ONLY in capsys.readouterr().err


def test_check_refuses_one_pair_that_cannot_run(capsys):
    assert main(["check", "--compiler", "maskscope", "--backend", "outlines", "x.json"]) == 2
    assert OUTLINES_ONLY in capsys.readouterr().err


@pytest.mark.slow
def test_generate_runs_the_currency_example_valid_on_the_outlines_pair(capsys):
    argv = ["generate", "--example", "currency", "--compiler", "outlines", "--backend"]
    code = main([*argv, "outlines", "--temperature", "0", "--max-tokens", "24", "--jsonl"])
    captured = capsys.readouterr()
    result = json.loads(captured.out.splitlines()[-1])["result"]
    assert code == 0, result
    assert result["valid"] is True and json.loads(result["text"])["currency"]
    assert "maskscope: Building the Outlines index…" in captured.err


@pytest.mark.slow
def test_check_summary_on_the_outlines_backend_runs_the_outlines_pair(capsys, tmp_path):
    schema = tmp_path / "currency.json"
    schema.write_text(json.dumps({
        "type": "object",
        "properties": {"currency": {"enum": ["USD", "EUR"]}},
        "required": ["currency"],
    }))  # fmt: skip
    instances = tmp_path / "currency.jsonl"
    instances.write_text('{"valid": true, "data": {"currency": "EUR"}}\n'
                         '{"valid": false, "data": {"currency": "JPY"}}\n')  # fmt: skip
    argv = ["check", "--summary", "--jobs", "1", "--backend", "outlines"]
    assert main([*argv, "--instances", str(instances), str(schema)]) == 0
    captured = capsys.readouterr()
    assert "| outlines | outlines | 1 | 100.0% (1/1) | 100.0% (1/1) |" in captured.out
    assert "skipped 4 pairings that cannot run together" in captured.err


def test_the_grammar_view_shows_the_outlines_regex_as_it_runs():
    from engine.examples import load_example
    from engine.grammar.compile import compile_schema
    from engine.grammar.rule_map import rule_map
    from engine.masking.grammar_text import backend_grammar

    compiled = compile_schema(load_example("currency").schema_text, "outlines")
    grammar = backend_grammar(compiled, "outlines")
    assert (grammar.text, grammar.language) == (compiled.native, "regex")
    assert "USD" in grammar.text
    assert rule_map(compiled, grammar.text, grammar.language).definitions == {}
