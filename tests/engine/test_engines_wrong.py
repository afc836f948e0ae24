"""With a suite: the known instances each production engine gets wrong, fed for real through
that engine's grammar on its own mask backend (llama.cpp's sampler, XGrammar's matcher,
outlines-core's Index, llguidance) by check's worker processes.

The schema is the engines report's SPLIT (tests/engine/test_engines_report.py); what each
engine does with the instances was read off real runs with llama-cpp-python 0.3.36,
XGrammar 0.2.9, llguidance 1.9.1 and outlines-core 0.2.14.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.engines.targets import TARGET_IDS
from engine.engines.wrong import NO_ENGINE, WrongInstance, WrongInstances, wrong_line
from tests.engine.test_engines_report import SPLIT

INSTANCES = [
    # "ab" matches both branches of kind's oneOf: invalid, and XGrammar reads oneOf as anyOf.
    {"valid": False, "data": {"price": 1, "kind": "ab"}, "description": "two oneOf branches"},
    {"valid": True, "data": {"price": 1, "kind": "abcdef"}, "description": "one branch"},
    {"valid": False, "text": '{"price": 1', "description": "cut off"},
    # meta names `x` in `required` only: XGrammar allows no key in it, so refuses this one.
    {"valid": True, "data": {"price": 2.5, "meta": {"x": 1}}, "description": "meta with x"},
]


def _write(folder: Path) -> tuple[str, str]:
    schema = folder / "split.json"
    schema.write_text(SPLIT, encoding="utf-8")
    suite = folder / "split.suite.json"
    body = {
        "format": "maskscope-suite",
        "version": 1,
        "name": "split",
        "schema_file": "split.json",
        "prompt": "A price.",
        "instances": INSTANCES,
    }
    suite.write_text(json.dumps(body), encoding="utf-8")
    return str(schema), str(suite)


# Two check workers load the model and feed every engine: about 40 s on 2 busy cores.
FED = pytest.mark.slow


@pytest.fixture(scope="module")
def engines(tmp_path_factory) -> dict[str, dict]:
    schema, suite = _write(tmp_path_factory.mktemp("suite"))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["lint", "--json", "--suite", suite, schema])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())["engines"]


def _numbers(cell: dict, key: str) -> list[int]:
    return [item["instance"] for item in cell["wrong"][key]]


@FED
def test_xgrammar_lets_two_one_of_branches_through_and_refuses_a_key_of_meta(engines):
    wrong = engines["vllm-xgrammar"]["wrong"]
    assert wrong["checked"] == 4
    assert _numbers(engines["vllm-xgrammar"], "accepts") == [1]
    assert wrong["accepts"][0] == {
        "instance": 1,
        "description": "two oneOf branches",
        "note": "accepted: the engine does not enforce `oneOf` at $.properties.kind",
    }
    assert _numbers(engines["vllm-xgrammar"], "rejects") == [4]
    note = wrong["rejects"][0]["note"]
    assert note.startswith("rejected at character ") and '"meta":⟦here⟧' in note.replace(" ", "")


@FED
def test_maskscope_gets_none_wrong(engines):
    assert engines["maskscope"]["wrong"] == {"checked": 4, "accepts": [], "rejects": []}


@FED
@pytest.mark.parametrize("target", ["llamacpp", "outlines"])
def test_the_converter_and_outlines_let_the_one_of_instance_through(engines, target):
    assert _numbers(engines[target], "accepts") == [1]
    assert _numbers(engines[target], "rejects") == []


@FED
def test_engines_not_run_say_why(engines):
    assert tuple(engines) == TARGET_IDS and all("wrong" in cell for cell in engines.values())
    assert engines["openai"]["wrong"] == {"skipped": NO_ENGINE}
    assert engines["vllm-guidance"]["wrong"] == {
        "skipped": "the engine does not take the schema: nothing to feed"
    }


def test_a_bad_suite_file_is_one_line_before_any_engine_runs(capsys, tmp_path):
    schema, _ = _write(tmp_path)
    assert main(["lint", "--json", "--suite", str(tmp_path / "none.suite.json"), schema]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and "none.suite.json" in captured.err


def test_the_line_for_a_cell():
    one = WrongInstance(1, "", "")
    assert wrong_line(WrongInstances((one,), (WrongInstance(4, "", ""),), 4)) == (
        "1 known-bad accepted (#1), 1 known-good rejected (#4)"
    )
    assert wrong_line(WrongInstances(checked=3)) == "none of 3 wrong"
    assert wrong_line(WrongInstances(skipped=NO_ENGINE)) == f"not fed: {NO_ENGINE}"
