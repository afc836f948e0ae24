"""`maskscope generate`: the table, --jsonl, and exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"
CURRENCY = [
    "--schema",
    str(EXAMPLES / "currency.schema.json"),
    "--prompt-file",
    str(EXAMPLES / "currency.prompt.txt"),
]


@pytest.mark.slow
def test_valid_output_exits_0_with_a_readable_table(capsys):
    assert main(["generate", *CURRENCY, "--temperature", "0"]) == 0
    out = capsys.readouterr().out
    assert "valid mass" in out and "VALID against the schema" in out


@pytest.mark.slow
def test_jsonl_prints_steps_then_the_result(capsys):
    code = main(["generate", *CURRENCY, "--jsonl", "--seed", "2", "--backend", "llamacpp"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    steps, result = lines[:-1], lines[-1]["result"]
    assert steps and code == (0 if result["valid"] else 1)
    for s in steps:
        assert {
            "step",
            "token_id",
            "token_text",
            "valid_mass",
            "n_valid",
            "top",
            "forward_ms",
            "mask_ms",
        } <= set(s)
        assert {"id", "text", "p_raw", "p_masked", "valid"} <= set(s["top"][0])
    assert {"text", "json", "valid", "errors", "finish_reason"} <= set(result)
    assert result["json"]["currency"] in {"USD", "EUR", "GBP", "UNKNOWN"}


@pytest.mark.slow
def test_truncated_output_exits_1(capsys):
    assert main(["generate", *CURRENCY, "--max-tokens", "3"]) == 1
    assert "truncated at max_tokens" in capsys.readouterr().out


@pytest.mark.parametrize(
    "schema_text, reason",
    [
        ('{"type": "object",', "line 1, column 19"),
        ('{"type": 12}', "invalid"),
        ('{"minLength": -1}', "invalid schema: -1 is less than the minimum of 0 at $.minLength"),
    ],
)
def test_bad_schema_exits_2_with_one_line(tmp_path, capsys, schema_text, reason):
    bad = tmp_path / "bad.json"
    bad.write_text(schema_text)
    assert main(["generate", "--schema", str(bad), "--prompt", "x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("maskscope: ") and "\n" not in err and reason in err


def test_missing_model_exits_2(tmp_path, capsys):
    code = main(["generate", *CURRENCY, "--model", str(tmp_path / "missing.gguf")])
    assert code == 2
    assert "model file not found" in capsys.readouterr().err


def test_missing_schema_file_exits_2(capsys):
    assert main(["generate", "--schema", "/nonexistent.json", "--prompt", "x"]) == 2
    assert "schema file not found" in capsys.readouterr().err


def test_building_the_command_line_loads_no_llama_cpp() -> None:
    """`maskscope report` and `--help` need no model: the parser must not load llama.cpp (the
    bench registered itself by importing its measuring code, which did)."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom engine.cli.main import build_parser\nbuild_parser()\n"
        "sys.exit(1 if 'llama_cpp' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
