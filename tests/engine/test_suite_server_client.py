"""The server client's pieces the real server (tests/engine/test_suite_server.py) cannot be
made to show: a dropped connection that a retry cures, an error status that must not be
retried, a server that refuses every form of response_format, and no server at all. The
first three use a tiny local http.server fake for that reason alone; the reply shapes are
read from llama-cpp-python's server."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from engine.cli.main import main
from engine.errors import SuiteError
from engine.records import FinishReason
from engine.suite.load import suite_from_json
from engine.suite.server.client import HttpRefusal, ServerClient, ServerUnreachable
from engine.suite.server.request import ServerOptions, read_answer, refuses_format
from engine.suite.server.run import run_suite_on_server

SUITE = {
    "format": "maskscope-suite",
    "version": 1,
    "name": "fake",
    "schema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    "generation": {"max_tokens": 8},
    "prompt": "{{x}}",
    "cases": [{"id": "one", "vars": {"x": "1"}}],
}

Handler = Callable[[http.server.BaseHTTPRequestHandler, int], None]


@contextmanager
def fake_server(
    handle: Handler, tls: ssl.SSLContext | None = None
) -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 whose every request goes to handle(request, n), n counting from
    0; yields its URL (http://, speaking TLS when `tls` is given) and the paths it was asked
    for."""
    seen: list[str] = []

    class _Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            handle(self, len(seen) - 1)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.do_GET()

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _send(request: http.server.BaseHTTPRequestHandler, status: int, body: object) -> None:
    data = json.dumps(body).encode()
    request.send_response(status)
    request.send_header("Content-Type", "application/json")
    request.send_header("Content-Length", str(len(data)))
    request.end_headers()
    request.wfile.write(data)


def _no_wait(_: float) -> None:
    pass


def test_a_dropped_connection_is_retried_until_the_server_answers_a_get():
    """A GET is safe to repeat; a POST that may have reached the server is not
    (tests/engine/test_suite_server_limits.py)."""

    def handle(request, n):
        if n < 2:  # close without a reply: what a server restarting does
            request.close_connection = True
            request.connection.shutdown(socket.SHUT_RDWR)
            return
        _send(request, 200, {"ok": n})

    waits: list[float] = []
    with fake_server(handle) as (url, seen):
        reply = ServerClient(url, sleep=waits.append).get("/v1/models")
    assert reply.data == {"ok": 2} and len(seen) == 3 and reply.retries == 2
    assert waits == [0.5, 1.0]  # backoff doubles


def test_an_http_error_is_not_retried_and_says_what_the_server_said():
    def handle(request, n):
        _send(request, 400, {"error": {"message": "bad grammar"}})

    with fake_server(handle) as (url, seen), pytest.raises(HttpRefusal) as refused:
        ServerClient(url, sleep=_no_wait).post("/v1/completions", {})
    assert (refused.value.status, refused.value.message) == (400, "bad grammar")
    assert len(seen) == 1


def test_no_server_at_all_is_unreachable_after_the_retries():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"  # bound, never listening: refused
        with pytest.raises(ServerUnreachable, match=r"cannot reach the server at .*4 tries"):
            ServerClient(url, sleep=_no_wait).get("/v1/models")


def test_an_unreachable_server_is_exit_2_with_a_clear_message(tmp_path, capsys):
    path = tmp_path / "fake.suite.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
        assert main(["test", str(path), "--server", url]) == 2
    said = capsys.readouterr().err
    assert f"cannot reach the server at {url}" in said and "is it running" in said


def test_a_server_refusing_both_response_format_forms_is_one_clear_error(model):
    def handle(request, n):
        if request.command == "GET":
            _send(request, 200, {"data": [{"id": "fake-model"}]})
        else:
            _send(request, 400, {"error": {"message": "response_format is not supported"}})

    suite = suite_from_json(SUITE, ".")
    with fake_server(handle) as (url, seen):
        options = ServerOptions(url, "response_format", logprobs=False)
        with pytest.raises(SuiteError, match=f"the server at {url} refuses response_format"):
            run_suite_on_server(model, suite, options)
    assert seen == ["/v1/models", "/v1/chat/completions", "/v1/chat/completions"]


def test_another_http_error_is_the_sample_failing_in_the_harness(model):
    def handle(request, n):
        if request.command == "GET":
            _send(request, 404, {"error": "no such route"})  # the model goes unnamed
        else:
            _send(request, 503, {"error": {"message": "overloaded"}})

    suite = suite_from_json(SUITE, ".")
    with fake_server(handle) as (url, _):
        made = run_suite_on_server(model, suite, ServerOptions(url, logprobs=False))
    (sample,) = made.run.samples
    assert made.server.model == ""
    assert sample.result.finish_reason is FinishReason.ERROR
    assert "HTTP 503: overloaded" in sample.result.message


def test_the_replies_of_both_endpoints_are_read_with_their_logprobs():
    completion = {
        "choices": [{"text": '{"a": 1}', "finish_reason": "length",
                     "logprobs": {"tokens": ["{", '"a"'], "token_logprobs": [-0.5, -1.5]}}],
        "usage": {"completion_tokens": 2},
    }  # fmt: skip
    answer = read_answer("grammar", completion)
    assert (answer.text, answer.finish_reason, answer.completion_tokens) == (
        '{"a": 1}',
        "length",
        2,
    )
    assert answer.tokens == ("{", '"a"') and answer.logprobs == (-0.5, -1.5)
    logprobs = {"content": [{"token": "{}", "logprob": -0.25}]}
    chat = {
        "choices": [{"message": {"content": "{}"}, "finish_reason": "stop", "logprobs": logprobs}]
    }
    assert read_answer("response_format", chat).logprobs == (-0.25,)
    with pytest.raises(SuiteError, match="no completion"):
        read_answer("grammar", {"error": "x"})


def test_only_a_refusal_naming_response_format_counts_as_one():
    assert refuses_format(HttpRefusal(500, "Input should be 'text' or 'json_object' json_schema"))
    assert not refuses_format(HttpRefusal(500, "out of memory"))


def test_local_only_options_do_not_go_with_a_server(tmp_path, capsys):
    path = tmp_path / "fake.suite.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    url = "http://127.0.0.1:9"  # never asked: the options are refused first
    assert main(["test", str(path), "--server", url, "--parallel", "2"]) == 2
    assert "with --server use --concurrency" in capsys.readouterr().err
