"""`maskscope check` end to end on the fixed sample: worker processes, exit codes, output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data"
EASY = str(DATA / "maskbench" / "Github_easy---o79427.json")
# llama.cpp's converter refuses this schema's valid instance (a key "/" under
# additionalProperties): an over-constraint.
OVER = str(DATA / "maskbench" / "JME_1.json")
SUITE = str(DATA / "json-schema-test-suite" / "required.json")
KEYS = {"file", "compiler", "backend", "compiled", "valid_ok", "valid_n", "invalid_rej"}
KEYS |= {"invalid_n", "unexplained", "ms"}


@pytest.mark.slow
def test_json_lines_in_input_order_and_exit_1_on_a_refused_valid_instance(capsys, tmp_path):
    code = main(["check", "--json", "--jobs", "2", "--compiler", "llamacpp", EASY, OVER, SUITE])
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [Path(ln["file"]).name for ln in lines[:2]] == [Path(EASY).name, Path(OVER).name]
    assert len(lines) == 2 + 5  # the suite file's five groups
    easy, over = lines[:2]
    assert set(easy) == KEYS and easy["valid_ok"] == easy["valid_n"] == 1
    assert easy["invalid_rej"] == easy["invalid_n"] == 2
    assert over["valid_ok"] < over["valid_n"]
    assert all(ln["group"] for ln in lines[2:]) and set(lines[2]) == KEYS | {"group"}
    # The saved lines make the table again, without running anything.
    saved = tmp_path / "out.jsonl"
    saved.write_text(out)
    assert main(["check", "--summary", str(saved)]) == 0
    table = capsys.readouterr().out
    assert "| llamacpp | llguidance | 2 | 100.0% (2/2) | 50.0% (1/2) |" in table
    assert "| 0 of 1 |" in table  # required.json: not every group passes


@pytest.mark.slow
def test_a_passing_schema_exits_0_with_a_readable_line(capsys):
    assert main(["check", "--jobs", "1", "--compiler", "llamacpp", EASY]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS  ") and "1/1 valid accepted, 2/2 invalid rejected" in out


@pytest.mark.slow
def test_human_output_names_where_a_valid_instance_was_refused(capsys):
    assert main(["check", "--jobs", "1", "--compiler", "llamacpp", OVER]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL  ") and "#1 valid, but rejected at character " in out
    assert ", token " in out and "⟦here⟧" in out


def test_the_llguidance_compiler_off_its_backend_is_refused(capsys):
    assert main(["check", "--compiler", "llguidance", "--backend", "llamacpp", EASY]) == 2
    assert "llguidance backend only" in capsys.readouterr().err


def test_a_missing_file_is_bad_input(capsys, tmp_path):
    assert main(["check", str(tmp_path / "nope.json")]) == 2
    assert "file not found" in capsys.readouterr().err


def test_human_lines_for_gaps_and_crashes():
    from engine.check.run import SchemaResult
    from engine.check.verdict import InstanceVerdict
    from engine.cli.check import _human
    from engine.grammar.report import Unenforced

    gap = Unenforced("$", "maximum", "not in the grammar")
    loose = InstanceVerdict(
        0, "", "7", valid=False, accepted=True, where="accepted", explained_by=(gap,)
    )
    gaps = SchemaResult("s.json", None, "maskscope", "llguidance", True, None, 3.0, (loose,))
    assert _human(gaps).splitlines() == [
        "GAPS  s.json [maskscope on llguidance]: 0/0 valid accepted, 0/1 invalid rejected, 3 ms",
        "      #1 invalid, accepted: $: `maximum` is not enforced (not in the grammar)",
    ]
    crash = SchemaResult("s.json", "g", "llamacpp", "llamacpp", False, "crashed: killed by SIGSEGV")
    assert _human(crash) == "CRASH s.json: g [llamacpp on llamacpp]: crashed: killed by SIGSEGV"


@pytest.mark.slow
def test_a_suites_known_instances_are_checked_against_its_grammar(capsys, tmp_path):
    suite = {
        "format": "maskscope-suite", "version": 1, "name": "s", "prompt": "{{x}}",
        "schema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}},
                   "required": ["n"], "additionalProperties": False},
        "cases": [{"id": "a", "vars": {"x": "1"}}],
        "instances": [{"data": {"n": 3}, "valid": True}, {"data": {"n": 30}, "valid": False},
                      {"data": {"n": "3"}, "valid": False}, {"text": '{"n": ', "valid": False}],
    }  # fmt: skip
    path = tmp_path / "s.suite.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    assert main(["check", str(path)]) == 0
    captured = capsys.readouterr()
    # the raw text that is not JSON is checked as written, not left out (issue 22)
    assert "1/1 valid accepted, 3/3 invalid rejected" in captured.out
    assert captured.err == ""
