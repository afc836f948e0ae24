"""An expectation no output of the schema can meet: a key expected absent (or absent or
null) where the schema requires it is a warning naming the case and the key, in
suite_warnings (the Suite pane's message line) and on `maskscope check` and `test`'s stderr.
No model needed."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from engine.cli import suite as suite_command
from engine.cli.base import load_suite_warned
from engine.cli.check import _cases as check_cases
from engine.suite.format import Expectation
from engine.suite.load import suite_from_json, suite_warnings
from engine.suite.never_met import never_met

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "email": {"type": "string"},
        "phone": {"type": ["string", "null"]},
        "team": {"$ref": "#/$defs/team"},
        "tags": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/tag"}},
        "notes": {"type": "array", "items": {"$ref": "#/$defs/tag"}},
    },
    "required": ["name", "email", "phone", "team", "tags", "notes"],
    "$defs": {
        "team": {
            "type": "object",
            "allOf": [{"required": ["lead"]}],
            "properties": {"lead": {"enum": ["a", "b"]}, "size": {"type": "integer"}},
        },
        "tag": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
    },
}


def _why(path: str, kind: str = "absent", schema: Any = None) -> str | None:
    return never_met(PERSON if schema is None else schema, Expectation(path, kind, None))


@pytest.mark.parametrize(
    "path", ["$.name", "$.email", "$.team", "$.team.lead", "$.tags[0]", "$.tags[0].k"]
)
def test_a_required_key_expected_absent_can_never_pass(path: str) -> None:
    assert _why(path) == f"{path} is expected absent, but the schema requires it"


@pytest.mark.parametrize(
    "path",
    [
        "$.team.size",  # not required
        "$.tags[1]",  # minItems 1: a second tag may not be there
        "$.notes[0].k",  # notes may be empty
        "$.missing",  # the schema does not name it
    ],
)
def test_a_key_that_may_be_left_out_is_no_warning(path: str) -> None:
    assert _why(path) is None


def test_absent_or_null_warns_only_where_null_is_not_allowed() -> None:
    assert _why("$.phone", "absent_or_null") is None  # null is allowed there
    assert _why("$.email", "absent_or_null") == (
        "$.email is expected absent or null, but the schema requires it and does not allow null"
    )
    assert _why("$.team.lead", "absent_or_null") is not None  # an enum without null


def test_only_what_the_schema_guarantees_counts() -> None:
    untyped = {"properties": {"a": {}}, "required": ["a"]}  # a string would do as well
    nullable = {"type": ["object", "null"], "properties": {"a": {}}, "required": ["a"]}
    assert _why("$.a", schema=untyped) is None
    assert _why("$.a", schema=nullable) is None
    assert _why("$.a", schema={"type": "object", "required": ["a"]}) == (
        "$.a is expected absent, but the schema requires it"
    )
    loop = {"$ref": "#", "type": "object", "required": ["a"]}  # a $ref cycle ends
    assert _why("$.a", schema=loop) is not None
    assert _why("$.a", "equals") is None


SUITE: dict[str, Any] = {
    "format": "maskscope-suite",
    "version": 1,
    "schema": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
        "required": ["name", "email"],
    },
    "prompt": "Extract the contact from {{text}}\nJSON:\n",
    "cases": [
        {
            "id": "no-email",
            "vars": {"text": "Call Kat Sato at the Acme office."},
            "expected": {"$.name": "Kat Sato", "$.email": {"absent": True}},
        },
        {"id": "given", "vars": {"text": "Mail kat@acme.io"}, "expected": {"$.name": "Kat"}},
    ],
}
WARNING = (
    "case 'no-email': $.email is expected absent, but the schema requires it, "
    "so the case can never pass"
)


def test_the_suite_warns_naming_the_case_and_the_key(tmp_path: Path) -> None:
    assert suite_warnings(suite_from_json(SUITE, tmp_path)) == [WARNING]
    optional = copy.deepcopy(SUITE)
    optional["schema"]["required"] = ["name"]
    assert suite_warnings(suite_from_json(optional, tmp_path)) == []


def test_check_and_test_say_it_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check` and `test` load a suite through load_suite_warned (the model-free part of
    each command is run here: the cases `check` reads, the suite `test` reads)."""
    path = tmp_path / "contact.suite.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    line = f"maskscope: warning: {path}: {WARNING}"
    [case], _ = check_cases(str(path), None)
    assert case.file == str(path)
    assert line in capsys.readouterr().err.splitlines()
    assert suite_command.load_suite_warned is load_suite_warned  # what `test` calls
    assert load_suite_warned(str(path)).cases[0].id == "no-email"
    assert line in capsys.readouterr().err.splitlines()
