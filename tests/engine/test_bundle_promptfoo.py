"""The exported bundle's promptfooconfig.yaml, run as it ships by the real promptfoo (the one
`make promptfoo` installs) against real servers on 127.0.0.1 serving the default model,
llama-server and llama-cpp-python's, its base URL given by MASKSCOPE_BASE_URL. The test
reads promptfoo's own JSON output.

Two cases, so that the count of passes is exact whatever the model answers: one whose
expectations every output the enum allows meets (a regex, and a key the schema lacks expected
absent), one whose expectation none can (the enum holds no "GBP"), which shows the field
assertions bite. The `is-json` check must pass on both, and neither may end as an error.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cli.main import main
from tests.llama_cpp_python_server import LlamaCppPythonServer
from tests.suite_files import EUR_INVOICE, SCHEMA, USD_INVOICE, currency_suite, write_suite

pytestmark = pytest.mark.slow  # a server process, promptfoo's node process

PROMPTFOO = Path(__file__).resolve().parents[2] / "build/node/node_modules/.bin/promptfoo"
SUITE = currency_suite(
    "promptfoo",
    max_tokens=12,
    temperature=0.0,
    schema={"$schema": "https://json-schema.org/draft/2020-12/schema", **SCHEMA},
    cases=[
        {"id": "usd", "vars": {"invoice": USD_INVOICE},
         "expected": {"$.currency": {"regex": "USD|EUR|UNKNOWN"}, "$.amount": {"absent": True}}},
        {"id": "never", "vars": {"invoice": EUR_INVOICE}, "expected": {"$.currency": "GBP"}},
    ],
    thresholds=None,
)  # fmt: skip


@pytest.fixture(scope="module")
def llama_cpp_python_server(tmp_path_factory) -> Iterator[str]:
    server = LlamaCppPythonServer(tmp_path_factory.mktemp("lcp") / "stderr.txt")
    try:
        server.start()
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("promptfoo")
    suite = write_suite(folder, SUITE)
    # exit 0: no threshold is set, so the "never" case's missed field fails nothing here
    assert main(["export", str(suite), "--out", str(folder / "B")]) == 0
    return folder / "B"


def _promptfoo(bundle: Path, url: str, tmp_path: Path) -> dict:
    if not PROMPTFOO.exists():
        pytest.fail("promptfoo is not installed: run `make promptfoo`", pytrace=False)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "MASKSCOPE_BASE_URL": url,
        "HOME": str(home),
        "PROMPTFOO_CONFIG_DIR": str(home / ".promptfoo"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    out = tmp_path / "out.json"
    command = [str(PROMPTFOO), "eval", "-c", str(bundle / "promptfooconfig.yaml"),
               "-o", str(out), "--no-cache", "--no-table", "--no-progress-bar"]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    # promptfoo exits 100 when a test fails (the "never" case must)
    assert done.returncode in (0, 100) and out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))["results"]


# llama-server (tests/llama_server.py) is the server the bundle recommends; llama-cpp-python's
# takes the same config unchanged.
@pytest.mark.parametrize("server", ["llama_server", "llama_cpp_python_server"])
def test_promptfoo_passes_the_bundle_as_shipped(bundle, server, request, tmp_path):
    results = _promptfoo(bundle, request.getfixturevalue(server), tmp_path)
    stats = results["stats"]
    assert (stats["successes"], stats["failures"], stats["errors"]) == (1, 1, 0)
    by_case = {r["testCase"]["description"]: r for r in results["results"]}
    for case in ("usd", "never"):
        parts = by_case[case]["gradingResult"]["componentResults"]
        kinds = {p["assertion"]["type"]: p["pass"] for p in parts}
        assert kinds["is-json"], parts  # the schema copy compiled and the output conforms
    assert by_case["usd"]["success"]
    usd = by_case["usd"]["gradingResult"]["componentResults"]
    # Both field assertions ran and held, the regex and the absent key (the schema has none).
    assert [p["pass"] for p in usd if p["assertion"]["type"] == "javascript"] == [True, True]
    assert not by_case["never"]["success"]
    assert not {p["assertion"]["type"]: p["pass"] for p in
                by_case["never"]["gradingResult"]["componentResults"]}["javascript"]  # fmt: skip
