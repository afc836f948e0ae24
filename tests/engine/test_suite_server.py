"""`maskscope test --server URL` against a real OpenAI-compatible server: llama-cpp-python's
own (`python -m llama_cpp.server`, its [server] extra) on 127.0.0.1 with the default model,
started once for this module and stopped after it.

What that server does, and what each test holds it to: the `grammar` field binds
/v1/completions; /v1/chat/completions refuses OpenAI's json_schema form (500) and takes
{"type": "json_object", "schema"}; /v1/completions silently ignores response_format, which the
fail-open check must catch. The schema and max_tokens are small: the server's grammar over a
262k vocabulary costs 2-3 forward passes a token, and its logprobs about 0.5 s a token.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.model.paths import default_model_path
from engine.runs.provenance import model_digest
from engine.schema.validate import validation_issues
from engine.suite.load import suite_from_json
from engine.suite.server.client import HttpRefusal, ServerClient
from engine.suite.server.request import ServerOptions, response_format
from engine.suite.server.run import run_suite_on_server
from tests.llama_cpp_python_server import LlamaCppPythonServer
from tests.suite_files import SCHEMA, currency_suite, write_suite

pytestmark = pytest.mark.slow  # a child process serving the model

SUITE = currency_suite("server", max_tokens=40)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[LlamaCppPythonServer]:
    """One server for the module; never skipped: a server that does not come up fails the
    test with its own stderr."""
    served = LlamaCppPythonServer(tmp_path_factory.mktemp("server") / "stderr.txt")
    try:
        served.start()
        yield served
    finally:
        served.stop()


@pytest.fixture
def server(served) -> str:
    """The server's URL; the test that stops the server runs last, so this restarts it only
    if the tests run in another order."""
    if not served.running:
        served.start()
    return served.url


@pytest.fixture
def suite_file(tmp_path) -> str:
    return str(write_suite(tmp_path, SUITE))


@pytest.fixture
def cache_folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setattr("engine.suite.cache.default_folder", lambda: folder)
    return folder


def _json_run(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_grammar_mode_binds_the_server_and_compares_with_the_local_run(
    server, suite_file, tmp_path, cache_folder, capsys
):
    page_file = tmp_path / "server.html"
    argv = ["test", suite_file, "--server", server, "--json", "--html", str(page_file)]
    code, result = _json_run(capsys, argv)
    assert code == 0, result["problems"]
    assert result["server"]["url"] == server and result["server"]["mode"] == "grammar"
    assert result["server"]["model"].endswith(".gguf")  # as /v1/models names it
    for sample in result["samples"]:
        assert sample["valid"] and set(sample["json"]) == {"currency"}
        assert validation_issues(sample["json"], SCHEMA) == ()
        assert sample["server"]["grammar"] == "accepted" and not sample["server"]["failed_open"]
        # Logprobs came back and are shown; the per-step masks do not exist here.
        assert len(sample["server"]["logprobs"]) == sample["metrics"]["n_tokens"]
        assert sample["metrics"]["mean_logprob"] < 0
        assert sample["metrics"]["mean_valid_mass"] is None
        assert sample["metrics"]["n_forced"] is None
    assert result["metrics"]["n_overruled"] is None and result["metrics"]["n_failed_open"] == 0
    assert result["metrics"]["min_logprob"] <= result["metrics"]["mean_logprob"] < 0
    # The HTML report names the server and the model it reported, not the local model's hash.
    page = page_file.read_text(encoding="utf-8")
    assert f"server {server}, mode grammar" in page and "PASSED · exit 0" in page
    assert html.escape(result["server"]["model"]) in page and "<script" not in page
    assert model_digest(default_model_path())[1] not in page

    local = tmp_path / "local.json"
    code, local_result = _json_run(capsys, ["test", suite_file, "--json"])
    local.write_text(json.dumps(local_result), encoding="utf-8")
    remote = tmp_path / "server.json"
    remote.write_text(json.dumps(result), encoding="utf-8")
    main(["test", "--compare", str(local), str(remote)])
    shown = capsys.readouterr().out
    assert f"server.json: server {server}, mode grammar" in shown
    assert "local.json: local" in shown


def test_response_format_falls_back_to_json_object(server, model):
    client = ServerClient(server)
    schema_form = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    schema_form["response_format"] = response_format("json_schema", SCHEMA)
    with pytest.raises(HttpRefusal) as refused:  # what makes the fallback needed here
        client.post("/v1/chat/completions", schema_form)
    assert refused.value.status == 500

    suite = suite_from_json(SUITE, ".")
    options = ServerOptions(server, "response_format", logprobs=False)
    made = run_suite_on_server(model, suite, options)
    assert made.server.response_format == "json_object"  # tried json_schema first
    assert len(made.run.samples) == 2
    for sample in made.run.samples:
        assert sample.valid, sample.failures
        assert set(sample.result.parsed) == {"currency"}
        assert not sample.failed_open
        # No timings in this server's replies: service is the request's own time, the wait
        # inside the server cannot be told apart (engine/suite/metrics.py).
        assert sample.server_ms is None and sample.queue_ms is None
        assert sample.service_ms == sample.latency_ms > 0


def test_response_format_on_completions_is_caught_failing_open(server, suite_file, capsys):
    argv = ["test", suite_file, "--server", server, "--server-mode",
            "completions+response_format", "--no-logprobs", "--json"]  # fmt: skip
    code, result = _json_run(capsys, argv)
    assert code == 2  # a server problem, never a test failure
    assert result["metrics"]["n_failed_open"] == 2
    assert any("the server failed open on 2 of 2 samples" in p for p in result["problems"])
    for sample in result["samples"]:
        assert "ignores the tested grammar" in sample["server"]["failed_open"]
        assert sample["failures"][0].startswith("the server failed open")


def test_a_cancel_keeps_the_finished_samples(server, model):
    suite = suite_from_json(SUITE, ".")
    stop = threading.Event()
    options = ServerOptions(server, concurrency=1, logprobs=False)
    made = run_suite_on_server(
        model, suite, options, should_stop=stop.is_set, on_progress=lambda p: stop.set()
    )
    assert made.run.cancelled and made.run.planned == 2
    assert [s.case_id for s in made.run.samples] == ["usd"]
    assert made.run.samples[0].valid


def test_a_server_gone_mid_run_keeps_the_finished_samples(
    served, server, suite_file, tmp_path, monkeypatch, capsys
):
    """Runs last: it stops the module's server once the first sample is back."""

    def stop_after_the_first(progress) -> None:
        if progress.done == 1:
            served.stop()  # the next request's connection is refused, every retry

    monkeypatch.setattr("engine.cli.suite.progress_printer", lambda: stop_after_the_first)
    junit = tmp_path / "junit.xml"
    argv = ["test", suite_file, "--server", server, "--concurrency", "1", "--no-logprobs",
            "--json", "--junit", str(junit)]  # fmt: skip
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    said = f"the server at {server} stopped answering after 1 of 2 samples: Connection refused"
    assert said in err and "Traceback" not in err
    result = json.loads(out)
    assert [s["case"] for s in result["samples"]] == ["usd"] and result["samples"][0]["valid"]
    assert result["problems"][0].startswith(said)
    assert not any(p.startswith("cancelled") for p in result["problems"])
    assert result["metrics"]["n_planned"] == 2 and result["exit_code"] == 2
    assert said in junit.read_text(encoding="utf-8")  # the harness <error> names it
