"""Issue 22: a deeply nested file is bad input (exit 2, one line naming the file and the
place), and an exception no reader explains is an internal error (exit 2, the traceback in a
log file whose path is printed), never exit 1 and a traceback on the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import lint
from engine.cli.main import main
from engine.schema.nesting import MAX_DEPTH, too_deep

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


def _items(levels: int) -> str:
    """`levels` schemas each holding the next in `items`, written without json (which would
    recurse as deep)."""
    return '{"type": "array", "items": ' * levels + '{"type": "string"}' + "}" * levels


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("levels", [300, 5000])
@pytest.mark.parametrize("command", ["lint", "check", "generate"])
def test_deep_items_are_bad_input_with_the_place(tmp_path, capsys, command, levels):
    path = tmp_path / "deep.json"
    path.write_text(_items(levels))
    (tmp_path / "i.jsonl").write_text('"x"\n')
    argv = {
        "lint": ["lint", str(path)],
        "check": ["check", str(path), "--instances", str(tmp_path / "i.jsonl")],
        "generate": ["generate", "--schema", str(path), "--prompt", "x", "--max-tokens", "4"],
    }[command]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    said = out if command == "lint" else _one_line(err)  # lint reports on stdout, as always
    assert "Traceback" not in out + err
    assert f"nests deeper than {MAX_DEPTH} levels" in said
    column = MAX_DEPTH * len('{"type": "array", "items": ') + 1  # the bracket of level 65
    assert str(path) in said
    assert (f"line 1, column {column}" in said) or (f":1:{column}:" in said)


def test_a_schema_at_the_limit_still_lints(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(_items(MAX_DEPTH - 1))
    assert main(["lint", str(path), "--json"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "body", "where"),
    [
        ("deep.suite.json", '{"format": "maskscope-suite", "x": ' + "[" * 5000 + "]" * 5000 + "}",
         "deep.suite.json, line 1, column"),
        ("cases.jsonl", None, "cases.jsonl, line 2, column"),
        ("cases.csv", None, "cases.csv, line 2"),
    ],
)  # fmt: skip
def test_deep_suite_and_cases_files_are_located(tmp_path, capsys, name, body, where):
    suite = tmp_path / "deep.suite.json"
    if body is None:
        deep = "[" * 3000 + "]" * 3000
        rows = {
            "cases.jsonl": '{"x": "1"}\n{"x": "2", "y": ' + deep + "}\n",
            "cases.csv": f"x,expected.a\n1,{deep}\n",
        }
        (tmp_path / name).write_text(rows[name])
        suite.write_text(json.dumps({
            "format": "maskscope-suite", "version": 1, "schema": {"type": "object"},
            "prompt": "{{x}}", "cases_file": name,
        }))  # fmt: skip
    else:
        suite.write_text(body)
    assert main(["test", str(suite)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert where in line and f"deeper than {MAX_DEPTH}" in line


def test_deep_check_instances_are_located(tmp_path, capsys):
    (tmp_path / "s.json").write_text('{"type": "array"}')
    (tmp_path / "i.jsonl").write_text("[]\n" + "[" * 5000 + "]" * 5000 + "\n")
    argv = ["check", str(tmp_path / "s.json"), "--instances", str(tmp_path / "i.jsonl")]
    assert main(argv) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"{tmp_path / 'i.jsonl'}, line 2, column {MAX_DEPTH + 1}" in line


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared MaskBench and test-suite data")
def test_the_limit_refuses_no_real_schema():
    """The MaskBench dev set and the official JSON Schema Test Suite nest at most 20 levels:
    the limit leaves them as they were (nothing is refused, so they compile as before)."""
    files = [*DATA.glob("maskbench-dev/*.json"), *DATA.glob("json-schema-test-suite/**/*.json")]
    assert len(files) > 500
    refused = [f.name for f in files if too_deep(f.read_text(encoding="utf-8")) is not None]
    assert refused == []


def test_an_unexpected_exception_is_an_internal_error_with_a_log(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    def broken(_args):
        raise ValueError("usage must be an object,\nnot 'x'")

    monkeypatch.setattr(lint, "cmd_lint", broken)
    assert main(["lint", str(tmp_path / "s.json")]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "internal error (ValueError: usage must be an object, not 'x')" in line
    logged = Path(line.rsplit("the traceback is in ", 1)[1])
    assert logged.is_relative_to(tmp_path / "state")
    text = logged.read_text()
    assert "Traceback" in text and "raise ValueError" in text and "lint" in text.splitlines()[0]


def test_an_unwritable_log_folder_still_gives_one_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "state").write_text("a file where the folder would go")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(lint, "cmd_lint", lambda _args: 1 / 0)
    assert main(["lint", "x.json"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "internal error (ZeroDivisionError" in line and "could not be written" in line
