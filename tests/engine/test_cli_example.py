"""`--example NAME` runs a bundled example with its own settings; options given win."""

from __future__ import annotations

import json

import pytest

from engine.cli.generate import generation_settings
from engine.cli.main import build_parser, main
from engine.examples import load_example
from engine.settings import GenerationSettings


def _settings(*argv: str) -> GenerationSettings:
    args = build_parser().parse_args(["generate", *argv])
    return generation_settings(args, load_example(args.example) if args.example else None)


def test_the_example_brings_its_settings_and_options_given_win() -> None:
    assert _settings("--example", "invoice").max_tokens == 1024
    assert _settings("--example", "invoice", "--max-tokens", "50").max_tokens == 50
    assert _settings("--schema", "s.json", "--prompt", "x") == GenerationSettings()
    tuned = _settings("--schema", "s.json", "--prompt", "x", "--seed", "7", "--cross-check")
    assert (tuned.seed, tuned.cross_check, tuned.max_tokens) == (7, True, 256)


def test_schema_and_example_exclude_each_other(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "--schema", "s.json", "--example", "invoice", "--prompt", "x"])
    assert exit_info.value.code == 2


def test_a_schema_file_needs_a_prompt(capsys, tmp_path) -> None:
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "string"}', encoding="utf-8")
    assert main(["generate", "--schema", str(schema)]) == 2
    assert "--prompt" in capsys.readouterr().err


@pytest.mark.slow  # the invoice example writes about 300 tokens
def test_the_invoice_example_finishes_from_the_command_line(capsys) -> None:
    code = main(["generate", "--example", "invoice", "--temperature", "0", "--jsonl"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["result"]
    assert result["finish_reason"] != "max_tokens", result["finish_reason"]
    assert code in (0, 1)  # finished: valid, or breaking an unenforced keyword
