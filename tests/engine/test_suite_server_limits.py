"""The --server client's limits (issue 22): a body-size limit, one deadline for the whole
request, retries only where a request is safe to repeat (with the count reported), TLS
verified with a clear message, and wrong types in an answer named as a field.

Every HTTP behaviour here is shown by a real server on 127.0.0.1: a tiny `http.server` in a
thread (tests/engine/test_suite_server_client.py's fake_server). It is a small stand-in
rather than llama-cpp-python's server because that server cannot be made to send a 2 MB
body, drip its reply a byte at a time, hold a POST past the deadline, refuse connections on
cue or present a self-signed certificate; the client sees the same sockets either way.
"""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest

from engine.errors import SuiteError
from engine.suite.load import suite_from_json
from engine.suite.server.client import Reply, ServerClient, ServerUnreachable
from engine.suite.server.request import ServerOptions, read_answer
from engine.suite.server.run import run_suite_on_server
from tests.engine.test_suite_server_client import SUITE, _send, fake_server


def _no_wait(_: float) -> None:
    pass


def test_a_body_beyond_the_limit_is_refused_with_a_clear_message():
    def handle(request, n):
        _send(request, 200, {"text": "x" * 5000})

    with fake_server(handle) as (url, _), pytest.raises(SuiteError, match="too large to read"):
        ServerClient(url, max_body_bytes=1000, sleep=_no_wait).post("/v1/completions", {})


def test_a_body_with_no_length_is_cut_at_the_limit():
    def handle(request, n):  # no Content-Length: the body ends when the connection closes
        request.send_response(200)
        request.end_headers()
        request.close_connection = True
        for _ in range(100):
            request.wfile.write(b"x" * 1000)

    with fake_server(handle) as (url, _), pytest.raises(SuiteError, match="still sending"):
        ServerClient(url, max_body_bytes=10_000, sleep=_no_wait).get("/v1/models")


def test_a_reply_dripped_past_the_deadline_is_stopped_at_the_deadline():
    body = json.dumps({"ok": True}).encode()

    def handle(request, n):  # each byte well inside a per-read timeout, the whole far past
        request.send_response(200)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        for byte in body:
            request.wfile.write(bytes([byte]))
            request.wfile.flush()
            time.sleep(0.3)

    with fake_server(handle) as (url, seen):
        t0 = time.monotonic()
        with pytest.raises(ServerUnreachable, match="timed out"):
            ServerClient(url, timeout_s=1.0, sleep=_no_wait).post("/v1/completions", {})
        took = time.monotonic() - t0
    assert took < 2.5  # the drip alone takes 3.3 s
    assert len(seen) == 1


def test_a_post_that_timed_out_is_sent_once():
    release = threading.Event()

    def handle(request, n):  # the server got it and is still decoding
        release.wait(5)
        _send(request, 200, {"ok": n})

    with fake_server(handle) as (url, seen):
        with pytest.raises(ServerUnreachable, match="not sent again"):
            ServerClient(url, timeout_s=0.3, sleep=_no_wait).post("/v1/completions", {})
        time.sleep(0.3)  # any resend would have arrived by now
        received = len(seen)
        release.set()
    assert received == 1


def test_a_post_whose_connection_dropped_is_not_sent_again():
    def handle(request, n):
        request.close_connection = True
        request.connection.shutdown(socket.SHUT_RDWR)

    with fake_server(handle) as (url, seen), pytest.raises(ServerUnreachable):
        ServerClient(url, sleep=_no_wait).post("/v1/completions", {})
    assert len(seen) == 1


def test_a_refused_connection_is_retried_and_the_retries_counted():
    """Nothing was sent while the port refused, so the POST is safe to send again; the
    server comes up during the first backoff."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
    started: list[http.server.ThreadingHTTPServer] = []
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen.append(self.path)
            _send(self, 200, {"ok": True})

        def log_message(self, *args) -> None:
            pass

    def come_up(_: float) -> None:
        if not started:
            httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            started.append(httpd)

    try:
        reply = ServerClient(f"http://127.0.0.1:{port}", sleep=come_up).post("/v1/x", {})
    finally:
        for httpd in started:
            httpd.shutdown()
            httpd.server_close()
    assert reply.data == {"ok": True} and reply.retries == 1 and len(seen) == 1


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_is_verified_and_an_untrusted_certificate_is_one_clear_error(self_signed):
    cert, key = self_signed
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)

    def handle(request, n):
        _send(request, 200, {"data": [{"id": "tls-model"}]})

    with fake_server(handle, tls) as (url, _):
        url = url.replace("http://", "https://")
        with pytest.raises(SuiteError, match="failed TLS certificate verification") as failed:
            ServerClient(url, sleep=_no_wait).get("/v1/models")
        assert not isinstance(failed.value, ServerUnreachable)  # refused, not retried
        trusting = ssl.create_default_context(cafile=str(cert))
        reply = ServerClient(url, ssl_context=trusting).get("/v1/models")
    assert reply.data == {"data": [{"id": "tls-model"}]}


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        ({"choices": [{"text": "{}"}], "usage": "x"}, "$.usage"),
        ({"choices": [{"text": "{}"}], "usage": {"completion_tokens": "7"}}, "completion_tokens"),
        ({"choices": [{"text": 7}]}, "$.choices[0].text"),
        ({"choices": [{"text": "{}", "finish_reason": 1}]}, "finish_reason"),
        ({"choices": [{"text": "{}", "logprobs": {"tokens": 3}}]}, "logprobs.tokens"),
        ({"choices": [{"text": "{}", "logprobs": {"content": ["x"]}}]}, "content[0]"),
    ],
)
def test_a_wrong_type_in_an_answer_is_an_error_naming_the_field(reply, field):
    with pytest.raises(SuiteError, match="the server's reply has") as wrong:
        read_answer("grammar", reply)
    assert field in wrong.value.message


def test_the_retries_are_reported_in_the_sample(model):
    """The count the client reports reaches the sample's note and the result; a stand-in
    client, since what is tested is the carrying, not HTTP."""

    class Client(ServerClient):
        def get(self, path: str) -> Reply:
            return Reply({"data": [{"id": "m"}]}, 1.0)

        def post(self, path: str, body: dict) -> Reply:
            return Reply({"choices": [{"text": '{"a": 1}', "finish_reason": "stop"}]}, 1.0, 2)

    suite = suite_from_json(SUITE, ".")
    options = ServerOptions("http://127.0.0.1:9", logprobs=False)
    client = Client(options.url)
    made = run_suite_on_server(model, suite, options, client=client)
    (sample,) = made.run.samples
    assert sample.server is not None and sample.server.retries == 2
