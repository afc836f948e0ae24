"""The results table of a run on a server: no per-step records, so its overruled and forced
cells read n/a, never "None" or 0, both for the run in the window and for its result file."""

from __future__ import annotations

import json

from app.suite.results_view import COLUMNS, ResultsView, verdict_html
from engine.decode.loop import finish_run
from engine.grammar.compile import compile_schema
from engine.records import FinishReason
from engine.runs.saved import SavedRun
from engine.settings import GenerationSettings
from engine.suite.format import Thresholds
from engine.suite.metrics import Sample, evaluate, field_results, runaway_of_pieces, summarise
from engine.suite.server.note import ServerNote
from engine.suite.summary import summary_to_json

SCHEMA = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}})


def _server_sample() -> Sample:
    result = finish_run('{"a": 1}', compile_schema(SCHEMA), FinishReason.END_OF_GENERATION, 3,
                        "", total_ms=50.0, setup_ms=0.0, prompt_ms=0.0, forward_ms=0.0,
                        mask_ms=0.0, settings=GenerationSettings(max_tokens=8))  # fmt: skip
    return Sample("c", 0, 0, result, (), 50.0, field_results(result, ()), None, None, None,
                  None, runaway_of_pieces(["{", "}"]), server=ServerNote())  # fmt: skip


def _step_cells(view: ResultsView) -> list[str]:
    columns = [COLUMNS.index("overruled"), COLUMNS.index("forced")]
    return [view.table.item(0, c).text() for c in columns]


def test_a_server_runs_step_counts_read_n_a(qtbot):
    view = ResultsView()
    qtbot.addWidget(view)
    sample = _server_sample()
    summary = summarise([sample], n_planned=1)
    verdict = evaluate(summary, Thresholds())
    view.finish([], summary, verdict)
    view.add(sample, SavedRun(SCHEMA, "p", "m.gguf", (), sample.result))
    assert _step_cells(view) == ["n/a", "n/a"]
    assert "overruled n/a, forced n/a" in verdict_html(summary, verdict)

    # The same run's --json result, opened: null step counts, no crash, n/a again.
    data = json.loads(json.dumps(summary_to_json(summary, verdict, "s")))
    view.show_result(data, "server.json")
    assert len(view.rows) == 1 and _step_cells(view) == ["n/a", "n/a"]
    assert "overruled n/a, forced n/a" in view.summary.text()
