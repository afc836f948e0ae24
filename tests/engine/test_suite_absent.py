"""Expectations that a key be absent, or absent or null (docs/suite-format.md): read and
written back, judged, exported to promptfoo, and a real model's invented email caught."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.errors import SuiteError
from engine.suite.bundle.promptfoo import expectation_js
from engine.suite.format import Expectation
from engine.suite.load import suite_from_json, suite_to_json

ABSENT = Expectation("$.email", "absent", None)
ABSENT_OR_NULL = Expectation("$.email", "absent_or_null", None)

# The contact has no email; Gemma 3 270M writes one anyway at seed 0, temperature 0
# (measured: {"name": "Kat Sato", "email": "kat.sato@gmail.com"}, 25 tokens).
CONTACT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "email": {"type": "string", "maxLength": 30},
    },
    "required": ["name"],
    "additionalProperties": False,
}
PROMPT = "Extract the contact's name and email as JSON.\nText: {{text}}\nJSON:\n"


def _suite(expected: dict) -> dict:
    return {
        "format": "maskscope-suite",
        "version": 1,
        "name": "contact",
        "schema": CONTACT,
        "prompt": PROMPT,
        "generation": {"max_tokens": 32, "temperature": 0.0, "seed": 0},
        "cases": [{"id": "no-email", "vars": {"text": "Call Kat Sato at the Acme office."},
                   "expected": expected}],
    }  # fmt: skip


def test_absent_or_null_passes_a_missing_key_and_a_null_and_absent_only_the_missing():
    assert ABSENT_OR_NULL.check({"name": "Kat"}) == (True, "")
    assert ABSENT_OR_NULL.check({"name": "Kat", "email": None}) == (True, "")
    assert ABSENT_OR_NULL.check({"email": "k@a.io"}) == (
        False,
        '$.email is "k@a.io", expected absent or null',
    )
    assert ABSENT.check({"name": "Kat"}) == (True, "")
    assert ABSENT.check({"email": None}) == (False, "$.email is null, expected absent")
    # Expecting null, the only way before, fails the correct answer that leaves the key out.
    assert Expectation("$.email", "equals", None).check({"name": "Kat"})[0] is False


def test_the_forms_load_write_back_and_older_forms_are_unchanged():
    data = _suite({"$.email": {"absent": True}, "$.phone": {"absent_or_null": True},
                   "$.name": "Kat Sato"})  # fmt: skip
    suite = suite_from_json(data, Path("."))
    assert suite.cases[0].expected == (
        ABSENT,
        Expectation("$.phone", "absent_or_null", None),
        Expectation("$.name", "equals", "Kat Sato"),
    )
    written = suite_to_json(suite)
    assert written["cases"][0]["expected"] == data["cases"][0]["expected"]
    assert suite_from_json(written, Path(".")) == suite


@pytest.mark.parametrize(
    ("spec", "path", "words"),
    [
        ({"absent": False}, "$.email", '{"absent": true} takes true, not false'),
        ({"absent_or_null": "yes"}, "$.email", '{"absent_or_null": true} takes true, not "yes"'),
        ({"absent": True, "equals": 1}, "$.email", "not one with keys ['absent', 'equals']"),
        ({"absent": True}, "$", "the whole output ($) is never absent"),
    ],
)
def test_a_malformed_absent_form_is_one_located_error(spec, path, words):
    with pytest.raises(SuiteError) as raised:
        suite_from_json(_suite({path: spec}), Path("."))
    assert raised.value.message.startswith(f"$.cases[0].expected[{json.dumps(path)}]: ")
    assert words in raised.value.message


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run JavaScript")
def test_absent_forms_become_javascript_that_checks_absence_on_text_or_parsed_output():
    cases = [
        (ABSENT, '{"name": "Kat"}', True),
        (ABSENT, '{"email": null}', False),
        (ABSENT, '{"email": "k@a.io"}', False),
        (ABSENT_OR_NULL, '{"name": "Kat"}', True),
        (ABSENT_OR_NULL, '{"email": null}', True),
        (ABSENT_OR_NULL, '{"email": ""}', False),
        # Own keys only: `?.["constructor"]` would find Object's in any object.
        (Expectation("$.constructor", "absent", None), "{}", True),
        (Expectation("$.items[1]", "absent", None), '{"items": [1]}', True),
        (Expectation("$.items[0]", "absent", None), '{"items": [1]}', False),
    ]
    for expectation, output, want in cases:
        js = expectation_js(expectation)
        # promptfoo hands the output over as text, or already parsed (OpenAI's json_schema).
        for given in (json.dumps(output), output):
            program = f"const output = {given}; console.log(String({js}));"
            done = subprocess.run(
                ["node", "-e", program], capture_output=True, text=True, timeout=30, check=True
            )
            assert done.stdout.strip() == str(want).lower(), (expectation, given)


@pytest.mark.slow  # a model load and a real decode
def test_a_real_models_invented_email_is_caught_by_absent(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("engine.suite.cache.default_folder", lambda: tmp_path / "cache")
    expected = {"$.email": {"absent": True}, "$.phone": {"absent_or_null": True}}
    path = tmp_path / "contact.suite.json"
    path.write_text(json.dumps(_suite(expected)), encoding="utf-8")
    junit, html = tmp_path / "junit.xml", tmp_path / "report.html"
    assert main(["test", str(path), "--json", "--junit", str(junit), "--html", str(html)]) == 0
    out = json.loads(capsys.readouterr().out)
    sample = out["samples"][0]
    invented = json.loads(sample["text"])["email"]
    assert "@" in invented  # no email in the text: the model made one up
    why = f"$.email is {json.dumps(invented)}, expected absent"
    assert sample["fields"] == [
        {"path": "$.email", "ok": False, "why": why},
        {"path": "$.phone", "ok": True, "why": ""},
    ]
    assert out["metrics"]["fields_ok"] == 1 and out["metrics"]["fields_checked"] == 2
    system_out = "".join(node.text or "" for node in ET.parse(junit).iter("system-out"))
    assert f"no-email, sample 1 (seed 0): {why}" in system_out  # a miss: no threshold set
    assert json.dumps(invented)[1:-1] in html.read_text(encoding="utf-8")
    assert "expected absent" in html.read_text(encoding="utf-8")
