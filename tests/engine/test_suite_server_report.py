"""The HTML report of a run on a server (`maskscope test --server URL --html FILE`), without a
server: it names the server instead of a local model, shows n/a for the per-step metrics,
stays script-free and escapes what the server and the model said."""

from __future__ import annotations

import json

from engine.decode.loop import finish_run
from engine.grammar.compile import compile_schema
from engine.records import FinishReason
from engine.runs.provenance import Provenance
from engine.settings import GenerationSettings
from engine.suite.bundle import tested as tested_module  # its Tested is no test class
from engine.suite.bundle.export import converter_gap
from engine.suite.format import Thresholds
from engine.suite.load import suite_from_json
from engine.suite.metrics import Sample, evaluate, field_results, runaway_of_pieces, summarise
from engine.suite.server.note import ServerNote
from engine.suite.server.report import server_report

HOSTILE = '<script>alert(1)</script> {{ 1 }} "q"'
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
SUITE = {"format": "maskscope-suite", "version": 1, "name": "s", "schema": SCHEMA,
         "prompt": "{{x}}", "cases": [{"id": "one", "vars": {"x": "1"}}]}  # fmt: skip
SERVER = {"url": "http://gpu:8080/" + HOSTILE, "mode": "grammar", "model": HOSTILE,
          "response_format": ""}  # fmt: skip
LOCAL_SHA = "ab" * 32


def _tested() -> tested_module.Tested:
    suite = suite_from_json(SUITE, ".")
    compiled = compile_schema(json.dumps(SCHEMA))
    settings = GenerationSettings(max_tokens=8)
    result = finish_run(HOSTILE, compiled, FinishReason.END_OF_GENERATION, 3, "", total_ms=50.0,
                        setup_ms=0.0, prompt_ms=0.0, forward_ms=0.0, mask_ms=0.0,
                        settings=settings)  # fmt: skip
    note = ServerNote(("a", "b"), (-0.5, -1.5), "rejected", "", "stop")
    sample = Sample("one", 0, 0, result, (), 50.0, field_results(result, ()), None, None, None,
                    None, runaway_of_pieces(["a", "b"]), server=note)  # fmt: skip
    summary = summarise([sample], n_planned=1)
    provenance = Provenance("local.gguf", 10, LOCAL_SHA, 5, "0.3", "", "0.1", "gbnf",
                            "llguidance", settings.to_json(), "2026-12-01T20:00:00Z")  # fmt: skip
    verdict = evaluate(summary, Thresholds(min_validity=0.5))
    gap = converter_gap(compiled)
    return tested_module.Tested(suite, compiled, summary, verdict, provenance, "1", "1", gap, 1)


def test_the_report_names_the_server_not_the_local_model_and_escapes_it():
    page = server_report(_tested(), SERVER)
    assert "default-src 'none'" in page and "<script" not in page and "{{" not in page
    assert "http://gpu:8080/&lt;script&gt;alert(1)&lt;/script&gt; &#123;&#123; 1" in page
    assert "model &lt;script&gt;" in page  # the model the server named, escaped
    assert "local.gguf" not in page and LOCAL_SHA not in page
    assert "maskscope test --server" in page and "mean -1.000 (from the server)" in page
    table = page.split('<pre class="scroll">')[1].split("</pre>")[0]
    for line in ("overruled steps", "forced steps", "valid mass mean / min"):
        row = next(r for r in table.splitlines() if line in r)
        assert "n/a" in row and "None" not in row, row
    assert "FAILED · exit 1" in page
