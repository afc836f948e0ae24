"""Messages a new user meets first: each reads right, says what to do, and shows no
Python internals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.errors import GrammarError, ModelLoadError, SchemaSyntaxError
from engine.grammar.compile import compile_schema
from engine.model.llama import check_gguf_file
from engine.runs.headless import run_to_end
from engine.schema.parse import parse_json_text
from engine.schema.validate import parse_output
from engine.settings import GenerationSettings

CURRENCY = ["--example", "currency"]


def test_unterminated_string_says_where_once():
    _, error = parse_output('{"currency": "EU')
    assert error == "Unterminated string starting at line 1, column 14"
    with pytest.raises(SchemaSyntaxError) as exc:
        parse_json_text('{"type": "str')
    assert " at at " not in str(exc.value) and not str(exc.value).endswith(" at")


REMOTE_REF = '{"$ref": "https://example.com/person.schema.json"}'
REF_TO_NOTHING = '{"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/b"}'


def test_remote_ref_names_no_flag_that_does_not_exist():
    # The converter's own message, which once named a flag Maskscope never had.
    with pytest.raises(GrammarError) as exc:
        compile_schema(REMOTE_REF, "llamacpp")
    message = str(exc.value)
    assert "--allow-fetch" not in message
    assert "https://example.com/person.schema.json" in message and "$defs" in message


def test_remote_ref_is_refused_by_our_compiler_by_name():
    with pytest.raises(GrammarError) as exc:
        compile_schema(REMOTE_REF, "maskscope")
    assert str(exc.value) == (
        "remote references are not supported: https://example.com/person.schema.json (at $)"
    )


def test_ref_to_nothing_names_the_ref_not_the_whole_schema():
    with pytest.raises(GrammarError) as exc:
        compile_schema(REF_TO_NOTHING, "llamacpp")
    assert str(exc.value) == "$ref #/$defs/b points to nothing in this schema"
    with pytest.raises(GrammarError) as exc:
        compile_schema(REF_TO_NOTHING, "maskscope")
    assert str(exc.value) == "the reference #/$defs/b points nowhere in the schema ($)"


def test_non_gguf_file_shows_its_first_bytes_readably(tmp_path: Path):
    binary = tmp_path / "weights.gguf"
    binary.write_bytes(b"\xb7\x3a\x00\x01" + b"\x00" * 60)
    with pytest.raises(ModelLoadError) as exc:
        check_gguf_file(binary)
    assert "bytes B7 3A 00 01" in str(exc.value) and "b'" not in str(exc.value)
    page = tmp_path / "page.gguf"
    page.write_text("<!DOCTYPE html><html>")  # a download that saved a web page
    with pytest.raises(ModelLoadError, match='it starts with "<!DO", not GGUF'):
        check_gguf_file(page)


@pytest.mark.slow
def test_chat_template_missing_prints_only_the_error(capsys):
    # The bundled model is a base model, without a chat template.
    assert main(["generate", *CURRENCY, "--chat-template"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and "no chat template" in err


@pytest.mark.slow
def test_cross_check_lists_each_token_once(capsys):
    # llama.cpp also allows byte-fallback tokens, whose text is that of an ordinary token.
    assert main(["generate", *CURRENCY, "--cross-check", "--temperature", "0"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "backends disagree" in ln]
    assert lines
    for line in lines:
        for listed in re.findall(r"\((.*?)(?: …)?\)", line):
            assert len(listed.split()) == len(set(listed.split())), line


@pytest.mark.slow
def test_disagreeing_tokens_read_differently(model, currency):
    example, compiled = currency
    settings = GenerationSettings(temperature=0.0, cross_check=True)
    seen = []
    run_to_end(model, compiled, example.prompt, settings, on_step=seen.append)
    disagreements = [r.disagreement for r in seen if r.disagreement is not None]
    assert disagreements
    for d in disagreements:
        for tokens in (d.only_primary, d.only_secondary):
            texts = [c.text for c in tokens]
            assert len(texts) == len(set(texts)), texts
