"""The bundle's grammar in every engine's syntax, and its requests for every server.

Each exported grammar file is read back by its own engine (llama.cpp, llguidance, XGrammar)
and judges the suite's instances and sampled outputs exactly as the tested grammar did; a
translation that judged one otherwise would be caught and left out. Every request in
snippets/ fails loudly (exit 1) on an HTTP 404 and on an invalid answer, and the requests for
llama-cpp-python's server give a valid answer from the real `python -m llama_cpp.server`.
vLLM and SGLang need GPU stacks and cannot run here: their requests carry grammar.lark and
grammar.xgrammar.ebnf, whose proof is the parse and verdicts of the engine they run.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jsonschema
import pytest

from engine.grammar.compile import compile_schema
from engine.suite.bundle.grammar_files import (
    LARK_FILE,
    XGRAMMAR_FILE,
    grammar_files,
    known_texts,
    prove,
)
from engine.suite.load import suite_from_json
from tests.suite_files import SCHEMA, currency_suite, export_on, write_suite

SUITE = currency_suite(
    "engines",
    max_tokens=16,
    prompt='Invoice 1\nAmount due: 61.00 EUR\n\nJSON:\n{"currency": "EUR"}\n\n{{invoice}}\n\n'
    "JSON:\n",
    cases=[{"id": "usd", "vars": {"invoice": "Invoice 2\nAmount due: 1,950.00 USD"}}],
    instances=[
        {"data": {"currency": "USD"}, "valid": True},
        {"data": {"currency": "JPY"}, "valid": False},
        {"data": {}, "valid": False},
        {"data": {"currency": "EUR", "amount": 1}, "valid": False},
        {"text": '{"currency": "EU', "valid": False},
    ],
)
# The requests each real server here answers; vLLM's and SGLang's need GPU stacks.
LLAMA_CPP_PYTHON_SNIPPETS = ("llama_cpp_python_server.json",)
LLAMA_SERVER_SNIPPETS = ("llama_server_grammar.json", "llama_server_response_format.json")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, model) -> Path:
    root = tmp_path_factory.mktemp("engines")
    return export_on(model, write_suite(root, SUITE), root)


def test_each_grammar_file_is_read_back_by_its_engine_and_judges_alike(bundle):
    report = json.loads((bundle / "report.json").read_text(encoding="utf-8"))
    rows = {row["file"]: row for row in report["grammars"]}
    # Five instances, each written one way (one key or none), and the sampled output.
    (output,) = [sample["text"] for sample in report["samples"]]
    n = 5 + (output not in ('{"currency": "USD"}', '{"currency": "EU'))
    assert list(rows) == ["grammar.gbnf", "grammar.lark", "grammar.xgrammar.ebnf"]
    engines = {"grammar.gbnf": "llama.cpp", "grammar.lark": "llguidance"}
    engines["grammar.xgrammar.ebnf"] = "XGrammar"
    for path, row in rows.items():
        assert row["shipped"] and (bundle / path).is_file()
        proof = row["proof"]
        assert proof["engine"] == engines[path] and proof["agrees"], proof
        assert proof["texts"] == proof["agreeing"] == n
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert "| `grammar.lark` | Lark | llguidance (llguidance " in readme
    assert f"| {n}/{n} |" in readme


def test_a_translation_that_judges_otherwise_is_caught_and_left_out(model):
    """The proof can fail: an XGrammar file that lost the enum value EUR, and a Lark file
    llguidance cannot parse, against the tested grammar on the instances."""
    suite = suite_from_json(SUITE, ".")
    compiled = compile_schema(suite.schema_text, "maskscope")
    real = {f.path: f for f in grammar_files(compiled)}
    wrong = dataclasses.replace(real[XGRAMMAR_FILE], text=real[XGRAMMAR_FILE].text.replace(
        '| "\\"EUR\\""', ""))  # fmt: skip
    broken = dataclasses.replace(real[LARK_FILE], text="start: (")
    texts = known_texts(suite, ['{"currency": "EUR"}'])
    proofs = {p.path: p for p in prove(model, compiled, "llguidance", [wrong, broken], texts)}
    assert proofs[XGRAMMAR_FILE].differs
    assert proofs[XGRAMMAR_FILE].differing == ('{"currency": "EUR"}',)
    assert proofs[LARK_FILE].differs and "llguidance refused the file" in proofs[LARK_FILE].error


@pytest.mark.parametrize(
    ("compiler", "backend", "files"),
    [
        ("llguidance", "llguidance", ["grammar.llguidance.json", LARK_FILE]),
        ("xgrammar", "xgrammar", [XGRAMMAR_FILE]),
    ],
)
def test_a_compiler_that_makes_no_gbnf_ships_what_its_engine_reads(model, compiler, backend, files):
    """llguidance's compiled schema also as Lark (`%json`, the same JSON Schema compiler);
    XGrammar's own EBNF alone: no engine's translation of it would be the same grammar."""
    suite = suite_from_json(SUITE, ".")
    compiled = compile_schema(suite.schema_text, compiler)
    made = grammar_files(compiled)
    assert [f.path for f in made] == files and made[0].text == compiled.native
    proofs = prove(model, compiled, backend, made, known_texts(suite, []))
    assert [(p.path, p.agreeing, p.total, p.agrees) for p in proofs] == [
        (path, 5, 5, True) for path in files
    ]


def test_an_outlines_suites_regex_ships_as_it_ran_and_is_not_run_again(model):
    """outlines-core's index over 262k tokens takes up to minutes: neither the regex nor the
    tested grammar is run for the proof, which says so."""
    suite = suite_from_json(SUITE, ".")
    compiled = compile_schema(suite.schema_text, "outlines")
    (proof,) = prove(model, compiled, "outlines", grammar_files(compiled), known_texts(suite, []))
    assert proof.path == "grammar.outlines.regex" and proof.unchecked and not proof.differs


class _Answers(BaseHTTPRequestHandler):
    """A stand-in server: the real servers answer a 404 only for a wrong path, and cannot be
    made to answer with text their own grammar refuses; this one does both on request."""

    status = 404
    reply = b'{"detail": "Not Found"}'

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stand_in() -> Iterator[tuple[str, type[_Answers]]]:
    handler = type("Handler", (_Answers,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _post(bundle: Path, request: str, url: str | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, str(bundle / "snippets" / "post.py"), str(bundle / "snippets" /
               request)] + ([url] if url else [])  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def test_every_script_in_snippets_fails_on_an_http_404(bundle, stand_in):
    url, _ = stand_in
    snippets = bundle / "snippets"
    scripts = sorted(p.name for p in snippets.iterdir() if p.suffix in (".py", ".sh"))
    # post.py sends every request; llama_cpp_python.py talks to no server.
    assert scripts == ["llama_cpp_python.py", "post.py"]
    requests = json.loads((snippets / "servers.json").read_text(encoding="utf-8"))
    on_disk = sorted(p.name for p in snippets.glob("*.json") if p.name != "servers.json")
    assert sorted(requests) == on_disk and len(on_disk) == 8
    for request in requests:
        done = _post(bundle, request, url)
        assert done.returncode == 1, (request, done.stdout, done.stderr)
        assert "HTTP 404" in done.stderr


def test_an_answer_that_breaks_the_schema_fails(bundle, stand_in):
    url, handler = stand_in
    handler.status = 200
    handler.reply = json.dumps({"content": '{"currency": "JPY"}'}).encode()
    done = _post(bundle, "llama_server_grammar.json", url)
    assert done.returncode == 1 and "invalid answer: 'JPY' is not one of" in done.stderr
    handler.reply = json.dumps({"content": '{"currency": "US'}).encode()
    done = _post(bundle, "llama_server_grammar.json", url)
    assert done.returncode == 1 and "not JSON" in done.stderr
    # Where jsonschema cannot be imported (-S: no site-packages), JSON is all it checks, and
    # it says so.
    handler.reply = json.dumps({"content": '{"currency": "JPY"}'}).encode()
    script, request = bundle / "snippets" / "post.py", bundle / "snippets/llama_server_grammar.json"
    done = subprocess.run(
        [sys.executable, "-S", str(script), str(request), url],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "jsonschema is not installed" in done.stderr


@pytest.mark.slow
def test_llama_cpp_pythons_server_gives_a_valid_answer_to_its_request(bundle, tmp_path):
    from tests.llama_cpp_python_server import LlamaCppPythonServer

    served = LlamaCppPythonServer(tmp_path / "stderr.txt")
    served.start()
    try:
        _answered_validly(bundle, LLAMA_CPP_PYTHON_SNIPPETS, served.url)
    finally:
        served.stop()


@pytest.mark.slow
def test_llama_server_gives_valid_answers_to_its_requests(bundle, llama_server):
    """llama.cpp's own llama-server (tests/llama_server.py): `/completion` with the tested
    GBNF, and `/v1/chat/completions` with `response_format` (its own converter's grammar)."""
    _answered_validly(bundle, LLAMA_SERVER_SNIPPETS, llama_server)


def _answered_validly(bundle: Path, requests: tuple[str, ...], url: str) -> None:
    for request in requests:
        done = _post(bundle, request, url)
        assert done.returncode == 0, (request, done.stderr)
        jsonschema.validate(json.loads(done.stdout), SCHEMA)
