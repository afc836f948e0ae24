"""One schema, every production engine: each cell is what that engine really does.

The engines run for real (llama.cpp's C++ converter, llama-server's, built by `make setup`,
with its GBNF judged in a child process; llguidance's and outlines-core's compilers,
Maskscope's own); the expectations were read off those runs with llama-cpp-python 0.3.36,
llguidance 1.9.1 and outlines-core 0.2.14.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.engines import isolated
from engine.engines.report import EngineResult, engines_report
from engine.engines.targets import TARGET_IDS, TARGETS, Target

# Treated differently by each: an overlapping oneOf, a float minimum, and an object with
# `required` but no `properties`.
SPLIT = json.dumps(
    {
        "type": "object",
        "properties": {
            "price": {"type": "number", "minimum": 0.5},
            "kind": {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]},
            "meta": {"type": "object", "required": ["x"]},
        },
        "required": ["price"],
    },
    indent=2,
)
# A pattern with a lookahead, which no regex automaton holds.
LOOKAHEAD = json.dumps(
    {
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^(?=.*[0-9])[A-Z0-9]{4}$"}},
        "required": ["id"],
        "additionalProperties": False,
    }
)
SKIPPED = {
    ("$.properties.price", "minimum"),
    ("$.properties.kind", "oneOf"),
    ("$.properties.meta", "required"),
}


@pytest.fixture(scope="module")
def split() -> dict[str, EngineResult]:
    return {r.target: r for r in engines_report(SPLIT)}


def _gaps(result: EngineResult) -> set[tuple[str, str]]:
    return {(u.path, u.keyword) for u in result.unenforced}


def test_one_result_per_target_in_order(split) -> None:
    assert tuple(split) == TARGET_IDS
    assert split["vllm-xgrammar"].label == "vLLM / SGLang (XGrammar)"


def test_llamacpp_compiles_and_skips_three_keywords(split) -> None:
    cell = split["llamacpp"]
    assert cell.compiles and cell.message is None and cell.lints is None
    assert _gaps(cell) == SKIPPED
    assert cell.version == importlib.metadata.version("llama-cpp-python")
    assert cell.engine == "llama.cpp's JSON-Schema converter (C++, as llama-server runs it)"


def test_llguidance_refuses_one_of(split) -> None:
    cell = split["vllm-guidance"]
    assert not cell.compiles and cell.unenforced == ()
    assert cell.message.startswith("llguidance's compiler refused the schema: oneOf")
    assert cell.version == importlib.metadata.version("llguidance")


def test_outlines_compiles_and_reports_what_it_skips(split) -> None:
    cell = split["outlines"]
    assert cell.compiles and _gaps(cell) == SKIPPED
    assert cell.version == importlib.metadata.version("outlines-core")


def test_maskscope_enforces_all_of_it(split) -> None:
    cell = split["maskscope"]
    assert cell.compiles and cell.unenforced == ()
    assert cell.version == importlib.metadata.version("maskscope")


def test_openai_refuses_it_by_its_documented_rules(split) -> None:
    cell = split["openai"]
    assert not cell.compiles and cell.version == "2026-02"
    assert {(lint.path, lint.keyword) for lint in cell.lints} == {
        ("$", "required"),
        ("$", "additionalProperties"),
        ("$.properties.meta", "additionalProperties"),
    }
    assert cell.message.startswith("the API would refuse the schema: $: every property")
    assert _gaps(cell) == {
        ("$.properties.kind", "oneOf"),
        ("$.properties.kind.oneOf[1]", "maxLength"),
    }


def test_xgrammar_is_present_and_compiles_or_says_why_not(split) -> None:
    cell = split["vllm-xgrammar"]
    assert cell.engine == "XGrammar"
    assert cell.compiles or cell.message


def test_a_lookahead_only_maskscope_enforces() -> None:
    cells = {r.target: r for r in engines_report(LOOKAHEAD)}
    # llama-server's converter warns and lets any string through (_visit_pattern).
    assert cells["llamacpp"].compiles
    [gap] = cells["llamacpp"].unenforced
    assert (gap.path, gap.keyword) == ("$.properties.id", "pattern")
    assert "unsupported group syntax" in gap.note
    assert cells["vllm-guidance"].message.startswith("llguidance's compiler refused")
    assert cells["outlines"].message.startswith("outlines-core cannot build the schema's regex")
    assert not any(cells[t].compiles for t in ("vllm-guidance", "outlines"))
    assert cells["maskscope"].compiles
    assert _gaps(cells["maskscope"]) == {("$.properties.id", "pattern")}
    assert cells["openai"].compiles  # a pattern is documented; the lookahead is not ruled on


def test_a_compiler_this_maskscope_lacks_is_a_reason_not_a_crash() -> None:
    ghost = Target("ghost", "Ghost", "Ghost engine", "ghost", "no-such-distribution")
    (cell,) = engines_report(SPLIT, (ghost,))
    assert not cell.compiles and cell.version is None
    assert cell.message == "this Maskscope has no ghost compiler yet"


def test_an_invalid_schema_is_a_reason_in_every_cell() -> None:
    for cell in engines_report('{"type": 12}'):
        assert not cell.compiles and cell.message, cell.target


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_lint_json_has_an_engines_object(capsys, tmp_path) -> None:
    assert main(["lint", "--json", _file(tmp_path, SPLIT)]) == 0
    engines = json.loads(capsys.readouterr().out)["engines"]
    assert tuple(engines) == TARGET_IDS
    for cell in engines.values():
        assert {"label", "engine", "version", "compiles", "unenforced"} <= set(cell)
        assert ("message" in cell) == (not cell["compiles"])
        for gap in cell["unenforced"]:
            assert set(gap) == {"path", "keyword", "note"}
    assert "lints" in engines["openai"] and "lints" not in engines["llamacpp"]
    fixable = next(lint for lint in engines["openai"]["lints"] if lint["keyword"] == "required")
    assert set(fixable) == {"path", "keyword", "note", "fix"}
    assert fixable["fix"]["edits"][0]["text"] == '["price", "kind", "meta"]'
    assert engines["llamacpp"]["compiles"] and not engines["vllm-guidance"]["compiles"]


def test_lint_human_output_has_an_engines_block(capsys, tmp_path) -> None:
    assert main(["lint", _file(tmp_path, SPLIT)]) == 0
    out = capsys.readouterr().out
    block = out[out.index("Engines:\n") :].splitlines()[1:-1]  # the verdict stays last
    assert [line.split(":")[0].strip() for line in block] == list(TARGET_IDS)
    assert "  llamacpp: llama.cpp / llama-server / Ollama, " in out
    assert "✓ compiles, 3 keyword(s) not enforced" in block[0]
    assert "openai: OpenAI Structured Outputs (strict), docs of 2026-02: ✗ the API" in out


@pytest.mark.parametrize("text", ["{not json", '{"type": 12}'])
def test_lint_on_a_bad_schema_exits_2_with_no_engines(capsys, tmp_path, text) -> None:
    assert main(["lint", "--json", _file(tmp_path, text)]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["engines"] == {}
    assert "Traceback" not in captured.err
    assert main(["lint", _file(tmp_path, text)]) == 2
    assert "Engines:" not in capsys.readouterr().out


def test_every_target_row_is_complete() -> None:
    assert len(set(TARGET_IDS)) == len(TARGETS)
    assert all(t.label and t.engine for t in TARGETS)


def test_a_schema_one_engine_cannot_hold_costs_only_its_cell() -> None:
    # 63 levels of nested arrays: outlines-core's regex doubles with each one, and aborted
    # the process asking for gigabytes; the outlines compiler now refuses it with the reason
    # (tests/engine/test_sandbox.py holds the abort itself). The others compile it.
    deep = '{"type": "array", "items": ' * 63 + '{"type": "string"}' + "}" * 63
    cells = {r.target: r for r in engines_report(deep)}
    outlines = cells["outlines"]
    assert not outlines.compiles
    assert "doubles with each nested array" in outlines.message
    assert "nests 63 levels" in outlines.message
    assert cells["vllm-guidance"].compiles and cells["llamacpp"].compiles
    assert cells["maskscope"].compiles


def test_a_child_past_its_time_limit_is_a_reason() -> None:
    child = isolated.start(SPLIT, "outlines", "outlines-core", limit_s=0.01)
    result = child.result()
    assert not result.compiles
    assert result.message == "outlines-core did not finish within 0.01 s in a check process"
