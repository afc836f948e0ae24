"""Queue apart from service on a real llama-server (the `llama_server` fixture: 4 slots) at
concurrency 8: half the requests wait for a slot. llama-server's `timings` give the time it
spent on each; the rest of the request's wall time is the wait. The suite's p95 threshold
holds the service time unless it asks for the wall time."""

from __future__ import annotations

import json

import pytest

from engine.cli.main import main
from engine.suite.format import Thresholds
from engine.suite.load import suite_from_json
from engine.suite.metrics import evaluate, summarise
from engine.suite.server.request import ServerOptions
from engine.suite.server.run import run_suite_on_server
from tests.suite_files import currency_suite, write_suite

pytestmark = pytest.mark.slow  # a server process

SUITE = currency_suite(
    "latency",
    max_tokens=10,
    prompt="Invoice {{n}}\nAmount due: 1,950.00 USD\n\nJSON:\n",
    samples=4,
    cases=[{"id": "a", "vars": {"n": "1"}}, {"id": "b", "vars": {"n": "2"}}],
    thresholds={"max_p95_latency_ms": 600000, "latency": "wall"},
)


def test_queue_and_service_apart_on_llama_server(llama_server, model, tmp_path, capsys):
    path = write_suite(tmp_path, SUITE)
    page, junit = tmp_path / "report.html", tmp_path / "junit.xml"
    argv = ["test", str(path), "--server", llama_server, "--concurrency", "8", "--json",
            "--html", str(page), "--junit", str(junit)]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    # Every report shows both: the table (on the page too), each sample, JUnit's properties.
    shown = page.read_text(encoding="utf-8")
    assert "service ms p50 / p95 (server&#x27;s own)" in shown and "queue wait ms" in shown
    assert shown.count("queued ") == 8
    assert 'name="service_ms_p95"' in junit.read_text(encoding="utf-8")
    metrics, samples = result["metrics"], result["samples"]
    assert metrics["n_server_timed"] == 8
    for s in samples:
        m = s["metrics"]
        assert 0 < m["service_ms"] <= m["latency_ms"]
        assert m["queue_ms"] == pytest.approx(m["latency_ms"] - m["service_ms"], abs=0.01)
    # Eight at once on four slots: some waited for a slot, about as long as one is served.
    waits = sorted(s["metrics"]["queue_ms"] for s in samples)
    assert waits[-1] > 0.5 * min(s["metrics"]["service_ms"] for s in samples)
    assert metrics["latency_ms_p95"] > metrics["service_ms_p95"]
    (check,) = result["thresholds"]  # the suite asked for the wall time
    assert check["metric"] == "p95 wall latency"
    assert check["measured"] == pytest.approx(metrics["latency_ms_p95"], abs=0.01)


def test_the_threshold_holds_service_time_unless_told_wall(llama_server, model, tmp_path):
    suite = suite_from_json({**SUITE, "thresholds": {}}, str(tmp_path))
    options = ServerOptions(llama_server, concurrency=8, logprobs=False)
    summary = summarise(run_suite_on_server(model, suite, options).run.samples)
    assert summary.queue_ms_p95 is not None and summary.queue_ms_p95 > 0
    between = (summary.service_ms_p95 + summary.latency_ms_p95) / 2
    service = evaluate(summary, Thresholds(max_p95_latency_ms=between))
    wall = evaluate(summary, Thresholds(max_p95_latency_ms=between, latency="wall"))
    assert service.passed and not wall.passed
    assert wall.failed[0].text.startswith("p95 wall latency")
