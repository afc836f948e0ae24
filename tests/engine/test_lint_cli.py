"""`maskscope lint`: exit codes, the JSON shape of issue 10, readable lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main

CLEAN = {
    "type": "object",
    "properties": {"name": {"type": ["string", "null"], "maxLength": 20}},
    "required": ["name"],
    "additionalProperties": False,
}
LINTED = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name", "nmae"],
}
UNENFORCED = {
    "type": "object",
    "properties": {"n": {"type": ["number", "null"], "minimum": 1, "maximum": 9}},
    "required": ["n"],
    "additionalProperties": False,
}


def _file(tmp_path: Path, schema: object, name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(schema if isinstance(schema, str) else json.dumps(schema, indent=2))
    return str(path)


def _line(path: str, needle: str) -> int:
    text = Path(path).read_text()
    return text[: text.index(needle)].count("\n") + 1


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict]:
    code = main(["lint", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_a_clean_schema_exits_0_even_when_strict(capsys, tmp_path) -> None:
    path = _file(tmp_path, CLEAN)
    code, out = _json(capsys, [path, "--strict"])
    assert code == 0
    engines = out.pop("engines")  # every engine's cell: tests/engine/test_engines_report.py
    assert out == {"problems": [], "unenforced": [], "overconstrained": [], "lints": []}
    assert engines["maskscope"]["compiles"]


def test_lints_exit_0_and_1_with_strict(capsys, tmp_path) -> None:
    path = _file(tmp_path, LINTED)
    code, out = _json(capsys, [path])
    assert code == 0 and out["problems"] == []
    ids = [lint["id"] for lint in out["lints"]]
    assert set(ids) == {
        "additional-properties-implicit",
        "unbounded",
        "required-missing",
        "no-unknown-exit",
    }
    for lint in out["lints"]:
        assert set(lint) - {"fix"} == {"id", "message", "path", "line", "column"}
    fixable = next(lint for lint in out["lints"] if lint["id"] == "unbounded")
    assert fixable["fix"]["target"] == "schema"
    assert set(fixable["fix"]["edits"][0]) == {"start", "end", "text"}
    missing = next(lint for lint in out["lints"] if lint["id"] == "required-missing")
    assert missing["path"] == "$.required[1]" and missing["line"] == _line(path, '"nmae"')
    assert main(["lint", "--json", "--strict", path]) == 1


def test_unenforced_keywords_and_overconstraint(capsys, tmp_path) -> None:
    path = _file(tmp_path, UNENFORCED)
    code, out = _json(capsys, [path, "--compiler", "llamacpp", "--backend", "llamacpp"])
    assert code == 0
    keywords = {gap["keyword"] for gap in out["unenforced"]}
    assert {"minimum", "maximum"} <= keywords
    for gap in out["unenforced"]:
        assert set(gap) == {"keyword", "path", "line", "column", "reason"}
        assert gap["path"] == "$.properties.n"
        assert gap["line"] == _line(path, f'"{gap["keyword"]}"')
    assert out["overconstrained"] == []
    assert main(["lint", "--json", "--strict", "--compiler", "llamacpp", path]) == 1
    capsys.readouterr()
    schema = {k: v for k, v in UNENFORCED.items() if k != "additionalProperties"}
    opened = _file(tmp_path, schema, "o.json")
    _, out = _json(capsys, [opened, "--compiler", "llamacpp", "--backend", "llamacpp"])
    [over] = out["overconstrained"]
    assert set(over) == {"keyword", "path", "line", "column", "reason"}
    assert over["keyword"] == "additionalProperties" and over["path"] == "$"


@pytest.mark.parametrize(
    "text",
    [
        '{"type": "string",',
        '{"type": "strng"}',
        '{"type": "string", "minLength": 3, "maxLength": 1}',
        '{"not": {}}',
    ],
)
def test_invalid_schemas_exit_2_with_each_problem(capsys, tmp_path, text: str) -> None:
    code, out = _json(capsys, [_file(tmp_path, text)])
    assert code == 2
    assert out["problems"] and all(p["severity"] == "error" for p in out["problems"])
    for problem in out["problems"]:
        assert set(problem) == {"severity", "message", "path", "line", "column"}
        assert problem["line"] == 1


def test_several_meta_schema_errors_all_come_out(capsys, tmp_path) -> None:
    schema = {"type": "objekt", "properties": {"a": {"minLength": -1}}, "maxItems": "3"}
    code, out = _json(capsys, [_file(tmp_path, schema)])
    assert code == 2
    paths = {p["path"] for p in out["problems"]}
    assert paths == {"$.type", "$.properties.a.minLength", "$.maxItems"}


def test_an_unreadable_file_exits_2(capsys, tmp_path) -> None:
    assert main(["lint", str(tmp_path / "missing.json")]) == 2
    assert "schema file not found" in capsys.readouterr().err


def test_the_llguidance_compiler_needs_its_backend(capsys, tmp_path) -> None:
    code, out = _json(
        capsys, [_file(tmp_path, CLEAN), "--compiler", "llguidance", "--backend", "llamacpp"]
    )
    assert code == 2 and "llguidance backend only" in out["problems"][0]["message"]


def test_readable_lines_the_bound_and_max_tokens(capsys, tmp_path) -> None:
    path = _file(tmp_path, CLEAN)
    assert main(["lint", path, "--max-tokens", "5"]) == 0
    out = capsys.readouterr().out
    assert f"{path}:1:1: warning: Max tokens is 5, below the longest valid output" in out
    assert "[max-tokens-below-bound]" in out
    assert "✓ the grammar runs (maskscope on llguidance)" in out
    assert "longest valid output" in out.splitlines()[-1]
    linted = _file(tmp_path, LINTED, "l.json")
    assert main(["lint", linted]) == 0
    out = capsys.readouterr().out
    line = _line(linted, '"nmae"')
    assert f"{linted}:{line}:5: warning: `required` names" in out
    assert "[required-missing]" in out and "no length bound" in out


def _suite_file(tmp_path: Path, name: str, **fields: object) -> str:
    suite = {"format": "maskscope-suite", "version": 1, "name": "s", "prompt": "{{x}}",
             "cases": [{"id": "a", "vars": {"x": "1"}}], **fields}  # fmt: skip
    return _file(tmp_path, suite, name)


def test_a_suite_file_is_not_linted_as_a_schema(capsys, tmp_path) -> None:
    """The suite's JSON as a schema would lint clean (its `format` an unknown format): one line
    naming the command that lints its schema, exit 2, nothing on stdout."""
    (tmp_path / "defs").mkdir()
    _file(tmp_path / "defs", CLEAN, "person.json")
    by_file = _suite_file(tmp_path, "people.suite.json", schema_file="defs/person.json")
    assert main(["lint", by_file]) == 2
    out, err = capsys.readouterr()
    schema = str(tmp_path / "defs" / "person.json")
    assert out == "" and err == (
        f"maskscope: {by_file} is a suite file, not a schema: lint its schema with "
        f"`maskscope lint --suite {by_file} {schema}`\n"
    )
    # ... and that command lints it, the suite's instances fed through each engine.
    assert main(["lint", "--suite", by_file, schema]) == 0
    assert "suite instances: none of 0 wrong" in capsys.readouterr().out
    # A suite told by its "format" under another name; its schema inline.
    inline = _suite_file(tmp_path, "people.json", schema=CLEAN)
    assert main(["lint", "--json", inline]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "its schema is inline: write its `schema` to a file" in err
    assert f"`maskscope check {inline}`" in err
    # A .suite.json that does not even parse is still no schema to lint.
    broken = _file(tmp_path, "{", "broken.suite.json")
    assert main(["lint", broken]) == 2
    assert "is a suite file, not a schema" in capsys.readouterr().err
