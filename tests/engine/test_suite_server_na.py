"""A run on a server has no per-step records: its step counts (n_steps, overruled, forced)
are n/a everywhere they are shown (table, JSON, JUnit, comparison), never "None" or 0."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from engine.decode.loop import finish_run
from engine.grammar.compile import compile_schema
from engine.records import Candidate, FinishReason, StepRecord
from engine.settings import GenerationSettings
from engine.suite.compare import compare_results, comparison_text
from engine.suite.format import Thresholds
from engine.suite.junit import junit_xml
from engine.suite.metrics import (
    Sample,
    evaluate,
    field_results,
    runaway_of_pieces,
    sample_from_run,
    summarise,
)
from engine.suite.server.note import ServerNote
from engine.suite.summary import summary_text, summary_to_json

SCHEMA = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})
SERVER = {"url": "http://gpu:8080", "mode": "grammar", "model": "m.gguf", "response_format": ""}


def _result(text: str = '{"a": 1}'):
    return finish_run(text, compile_schema(SCHEMA), FinishReason.END_OF_GENERATION, 3, "",
                      total_ms=50.0, setup_ms=0.0, prompt_ms=0.0, forward_ms=0.0, mask_ms=0.0,
                      settings=GenerationSettings(max_tokens=8))  # fmt: skip


def server_sample(case: str = "c") -> Sample:
    result = _result()
    return Sample(case, 0, 0, result, (), 50.0, field_results(result, ()), None, None, None,
                  None, runaway_of_pieces(["{", "}"]), server=ServerNote())  # fmt: skip


def _local_sample(case: str = "c") -> Sample:
    chosen = Candidate(7, "{", 0.5, 1.0, True, "{")
    records = tuple(
        StepRecord(i, 7, "{", "{", (chosen,), (chosen,), 0.9, 0.0, 5, True, 1.0, 1.0, 0.1, i + 1)
        for i in range(3)
    )
    return sample_from_run(case, 0, 0, _result(), records)


def test_the_step_counts_of_a_server_run_are_none_and_shown_as_n_a():
    summary = summarise([server_sample()], n_planned=1)
    assert (summary.n_steps, summary.n_overruled, summary.n_forced) == (None, None, None)
    verdict = evaluate(summary, Thresholds())
    text = summary_text(summary, verdict, "s", SERVER)
    steps = [line for line in text.splitlines() if "overruled" in line or "forced" in line]
    assert len(steps) == 2 and all(line.split()[-1] == "n/a" for line in steps), steps
    assert "None" not in text and "(of 0)" not in text
    metrics = summary_to_json(summary, verdict, "s", SERVER)["metrics"]
    assert (metrics["n_steps"], metrics["n_overruled"], metrics["n_forced"]) == (None,) * 3

    root = ET.fromstring(junit_xml(summary, verdict, "s", server=SERVER))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["n_steps"] == props["n_overruled"] == props["n_forced"] == "n/a"
    out = root.find("system-out").text
    assert "None" not in out and "on the server http://gpu:8080" in out


def test_a_local_run_keeps_its_step_counts():
    summary = summarise([_local_sample()])
    assert (summary.n_steps, summary.n_overruled, summary.n_forced) == (3, 0, 0)
    root = ET.fromstring(junit_xml(summary, evaluate(summary, Thresholds()), "s"))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["n_steps"] == "3" and props["n_forced"] == "0"


def test_compare_shows_a_server_runs_steps_as_n_a_not_zero():
    local, served = summarise([_local_sample()]), summarise([server_sample()])
    a = summary_to_json(local, evaluate(local, Thresholds()), "s")
    b = summary_to_json(served, evaluate(served, Thresholds()), "s", SERVER)
    text = comparison_text(compare_results(a, b, ("local.json", "server.json")))
    steps = [line.split() for line in text.splitlines() if line.split()[:1] == ["n_steps"]]
    assert steps == [["n_steps", "3", "→", "n/a"]]
    assert "None" not in text and "→ 0" not in text
