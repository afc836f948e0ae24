"""Issue 22: every known instance in a suite is checked, or refused with its place. A raw
text that is not JSON (the suite format's own example: an object cut off at max_tokens) was
left out of `maskscope check` with only a note on stderr; it is now fed exactly as written,
as a known-bad instance the grammar must refuse."""

from __future__ import annotations

import json
from pathlib import Path

from engine.cli.main import main

CURRENCY = Path(__file__).resolve().parents[2] / "resources" / "suites" / "currency.suite.json"


def _suite(tmp_path: Path, instances: list[dict]) -> str:
    data = json.loads(CURRENCY.read_text(encoding="utf-8"))
    data["instances"] = instances
    path = tmp_path / "c.suite.json"
    path.write_text(json.dumps(data))
    return str(path)


def _check(capsys, path: str) -> tuple[int, dict, str]:
    code = main(["check", path, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def test_the_bundled_suites_cut_off_text_is_checked_and_refused(capsys):
    code, result, err = _check(capsys, str(CURRENCY))
    raw = [i for i in json.loads(CURRENCY.read_text())["instances"] if "text" in i]
    assert [(i["text"], i["valid"]) for i in raw] == [('{"currency": "EU', False)]
    assert code == 0 and err == ""
    known_bad = sum(not i["valid"] for i in json.loads(CURRENCY.read_text())["instances"])
    assert (result["invalid_n"], result["invalid_rej"]) == (known_bad, known_bad)


def test_hostile_raw_texts_are_fed_as_written_and_refused(tmp_path, capsys):
    hostile = ['{"currency": "USD"} trailing', "\x00\ufffd", "'USD'", "{" * 300]
    instances = [{"data": {"currency": "USD"}, "valid": True}]
    instances += [{"text": t, "valid": False} for t in hostile]
    code, result, err = _check(capsys, _suite(tmp_path, instances))
    assert code == 0, err
    assert (result["valid_ok"], result["invalid_n"], result["invalid_rej"]) == (1, 4, 4)
    assert "left out" not in err


def test_a_raw_text_that_is_not_json_cannot_be_known_good(tmp_path, capsys):
    instances = [{"data": {"currency": "USD"}, "valid": True},
                 {"text": '{"currency": "EU', "valid": True}]  # fmt: skip
    path = _suite(tmp_path, instances)
    assert main(["check", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}, $.instances[1].text: a text that is not JSON is never valid" in err
