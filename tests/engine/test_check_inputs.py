"""The three kinds of input `maskscope check` reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.check.inputs import load_cases
from engine.errors import MaskscopeError

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_maskbench_file_is_one_case_with_its_labels():
    [case] = load_cases(str(DATA / "maskbench" / "Github_easy---o79427.json"))
    assert case.group is None and isinstance(case.schema, dict)
    assert [i.valid for i in case.instances] == [True, False, False]


def test_a_suite_file_is_one_case_per_group():
    cases = load_cases(str(DATA / "json-schema-test-suite" / "required.json"))
    assert len(cases) == 5
    assert cases[0].group == "required validation"
    assert cases[0].name == "required: required validation"
    assert len(cases[0].instances) == 7


def test_a_bare_schema_with_plain_and_labelled_lines(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "integer"}')
    lines = tmp_path / "i.jsonl"
    lines.write_text('1\n\n{"data": "x", "valid": false}\n{"data": 1, "other": 2}\n')
    [case] = load_cases(str(schema), str(lines))
    assert case.schema == {"type": "integer"}
    assert [(i.data, i.valid) for i in case.instances] == [
        (1, None),
        ("x", False),
        ({"data": 1, "other": 2}, None),  # not a label: a value with a key named data
    ]


def test_a_bare_schema_without_instances_is_refused(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"type": "integer"}))
    with pytest.raises(MaskscopeError, match="--instances"):
        load_cases(str(schema))


def test_unreadable_inputs_name_the_file(tmp_path):
    with pytest.raises(MaskscopeError, match="file not found"):
        load_cases(str(tmp_path / "missing.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(MaskscopeError, match=r"bad\.json: not JSON"):
        load_cases(str(bad))
    lines = tmp_path / "i.jsonl"
    lines.write_text("1\n{oops\n")
    good = tmp_path / "g.json"
    good.write_text("{}")
    with pytest.raises(MaskscopeError, match="line 2"):
        load_cases(str(good), str(lines))
