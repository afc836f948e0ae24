"""`maskscope test --server URL` in each mode against llama.cpp's own llama-server (built by
`make llama-server` from the llama.cpp Maskscope runs; the `llama_server` fixture starts it).

What llama-server does, read in its source (tools/server/ in llama-cpp-python 0.3.36's sdist)
and held here: `grammar` binds /v1/completions (server-schema.cpp: the `json_schema` field and
its `grammar` alias); /v1/chat/completions takes OpenAI's json_schema form as sent
(server-common.cpp, oaicompat_chat_params_parse), so no fallback to json_object is needed;
/v1/completions copies `response_format` into its parameters and never reads it
(oaicompat_completion_params_parse), so it fails open there, as llama-cpp-python's server does,
while llama.cpp's own `json_schema` field binds it. Logprobs come back only when at least one
alternative is asked for (server-context.cpp: `n_probs > 0`).
"""

from __future__ import annotations

import json

import pytest

from engine.cli.main import main
from engine.schema.validate import validation_issues
from engine.suite.load import suite_from_json
from engine.suite.server.client import ServerClient
from engine.suite.server.request import ServerOptions
from engine.suite.server.run import run_suite_on_server
from tests.suite_files import PROMPT, SCHEMA, currency_suite, write_suite

pytestmark = pytest.mark.slow  # a child process serving the model, a few tokens a second

SUITE = currency_suite("llama-server", max_tokens=16)


@pytest.fixture
def suite_file(tmp_path) -> str:
    return str(write_suite(tmp_path, SUITE))


def _json_run(capsys, argv: list[str]) -> tuple[int, dict]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_grammar_mode_binds_llama_server_and_reads_its_logprobs(llama_server, suite_file, capsys):
    code, result = _json_run(capsys, ["test", suite_file, "--server", llama_server, "--json"])
    assert code == 0, result["problems"]
    assert result["server"]["mode"] == "grammar"
    assert result["server"]["model"].endswith(".gguf")  # /v1/models: the path given to -m
    for sample in result["samples"]:
        assert sample["valid"] and validation_issues(sample["json"], SCHEMA) == ()
        assert sample["server"]["grammar"] == "accepted" and not sample["server"]["failed_open"]
        assert len(sample["server"]["logprobs"]) == sample["metrics"]["n_tokens"] > 0
    assert result["metrics"]["n_failed_open"] == 0
    assert result["metrics"]["min_logprob"] <= result["metrics"]["mean_logprob"] < 0


def test_response_format_takes_openais_json_schema_form(llama_server, model):
    options = ServerOptions(llama_server, "response_format", logprobs=False)
    made = run_suite_on_server(model, suite_from_json(SUITE, "."), options)
    assert made.server.response_format == "json_schema"  # taken at once: no fallback
    assert len(made.run.samples) == 2
    for sample in made.run.samples:
        # llama-server's chat grammar lets whitespace follow the object without end
        # (chat-auto-parser-generator.cpp), and it trims that from the content: a sample may
        # run to max_tokens after a whole, valid object. That is the server's behaviour the
        # comparison reports; here the object itself must be right.
        assert sample.valid or sample.failures == ("truncated at max_tokens",), sample.failures
        assert validation_issues(json.loads(sample.result.text), SCHEMA) == ()
        assert set(sample.result.parsed) == {"currency"} and not sample.failed_open


def test_response_format_on_completions_fails_open_and_is_caught(llama_server, suite_file, capsys):
    argv = ["test", suite_file, "--server", llama_server, "--server-mode",
            "completions+response_format", "--no-logprobs", "--json"]  # fmt: skip
    code, result = _json_run(capsys, argv)
    assert code == 2, result["problems"]  # a server problem, never a test failure
    assert result["metrics"]["n_failed_open"] == 2
    assert any("the server failed open on 2 of 2 samples" in p for p in result["problems"])
    # llama.cpp's own field on the same endpoint does bind: the one a client should send there.
    body = {"prompt": PROMPT.replace("{{invoice}}", "Invoice 7\nAmount due: 5 USD"),
            "json_schema": SCHEMA, "max_tokens": 16, "temperature": 0}  # fmt: skip
    text = ServerClient(llama_server).post("/v1/completions", body).data["choices"][0]["text"]
    assert validation_issues(json.loads(text), SCHEMA) == ()
