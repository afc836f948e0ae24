"""The exported bundle's promptfooconfig.yaml, run as it ships by the real promptfoo (the one
`make promptfoo` installs) against real servers on 127.0.0.1 serving the default model,
llama-server and llama-cpp-python's, its base URL given by MASKSCOPE_BASE_URL. The test
reads promptfoo's own JSON output and exit code.

Two cases, so that the count of passes is exact whatever the model answers: one whose
expectations every output the enum allows meets (a regex, and a key the schema lacks expected
absent), one whose expectation none can (the enum holds no "GBP"), which shows the field
assertions bite. The `is-json` check must pass on both, and neither may end as an error.

With thresholds, promptfoo's verdict is `maskscope test`'s: a suite whose field accuracy is
exactly 0.5 (one case's field always met, the other's never) passes at a 0.5 minimum though
one case fails every sample, and fails at 0.75, in `maskscope test` (local, at the export, and
`--server` on the same llama-server) and in promptfoo's exit code alike.
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
from tests.llama_server import served
from tests.suite_files import EUR_INVOICE, SCHEMA, USD_INVOICE, currency_suite, write_suite

pytestmark = pytest.mark.slow  # a server process, promptfoo's node process

PROMPTFOO = Path(__file__).resolve().parents[2] / "build/node/node_modules/.bin/promptfoo"
# Through the server's chat template the object takes 13 tokens on llama-server (its chat
# grammar lets whitespace in): at 12 every output was cut off, which promptfoo now counts.
SUITE = currency_suite(
    "promptfoo",
    max_tokens=24,
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
def llama_server(tmp_path_factory) -> Iterator[str]:
    """A llama-server of this module's own, in place of the session's: after other modules'
    requests the shared one answered otherwise (its slots keep what they served), and a
    sample ran on in whitespace to max_tokens (the fresh clone's run at 67ecb7b: 0 passes
    where 1 is exact). Fresh, its greedy answers are the same every run."""
    yield from served(tmp_path_factory.mktemp("llama-server") / "server.log")


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


def _promptfoo(bundle: Path, url: str, tmp_path: Path) -> tuple[int, dict]:
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
    # As shipped: the config itself asks for one request at a time (evaluateOptions).
    command = [str(PROMPTFOO), "eval", "-c", str(bundle / "promptfooconfig.yaml"),
               "-o", str(out), "--no-cache", "--no-table", "--no-progress-bar"]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip
    # promptfoo exits 100 when the pass rate is under PROMPTFOO_PASS_RATE_THRESHOLD
    assert done.returncode in (0, 100) and out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return done.returncode, json.loads(out.read_text(encoding="utf-8"))["results"]


# llama-server (tests/llama_server.py) is the server the bundle recommends; llama-cpp-python's
# takes the same config unchanged.
@pytest.mark.parametrize("server", ["llama_server", "llama_cpp_python_server"])
def test_promptfoo_passes_the_bundle_as_shipped(bundle, server, request, tmp_path):
    code, results = _promptfoo(bundle, request.getfixturevalue(server), tmp_path)
    stats = results["stats"]
    assert (stats["successes"], stats["failures"], stats["errors"]) == (1, 1, 0)
    assert code == 0  # no threshold: `maskscope test` passes it, and so does promptfoo
    by_case = {r["testCase"]["description"]: r for r in results["results"]}
    for case in ("usd", "never"):
        parts = by_case[case]["gradingResult"]["componentResults"]
        kinds = {p["assertion"]["type"]: p["pass"] for p in parts}
        assert kinds["is-json"], parts  # the schema copy compiled and the output conforms
        assert kinds["not-finish-reason"], parts  # and it was not cut off at max_tokens
    assert by_case["usd"]["success"]
    usd = by_case["usd"]["gradingResult"]["componentResults"]
    # Both field assertions ran and held, the regex and the absent key (the schema has none).
    assert [p["pass"] for p in usd if p["assertion"]["type"] == "javascript"] == [True, True]
    assert not by_case["never"]["success"]
    assert not {p["assertion"]["type"]: p["pass"] for p in
                by_case["never"]["gradingResult"]["componentResults"]}["javascript"]  # fmt: skip


# One field per case, so that field accuracy is a share of promptfoo's rows; two samples, so
# that the rows are cases × samples (one provider per seed).
THRESHOLD_SUITE = {
    **SUITE,
    "samples": 2,
    "cases": [
        {"id": "usd", "vars": SUITE["cases"][0]["vars"],
         "expected": {"$.currency": {"regex": "USD|EUR|UNKNOWN"}}},
        SUITE["cases"][1],
    ],
}  # fmt: skip


@pytest.mark.parametrize(("minimum", "verdict", "exit_code"), [(0.5, 0, 0), (0.75, 1, 100)])
def test_promptfoo_passes_and_fails_where_maskscope_test_does(
    llama_server, minimum, verdict, exit_code, tmp_path
):
    suite = tmp_path / "threshold.suite.json"
    data = {**THRESHOLD_SUITE, "thresholds": {"min_field_accuracy": minimum}}
    suite.write_text(json.dumps(data), encoding="utf-8")
    # `maskscope test`'s verdict, run locally by the export and on the same server.
    assert main(["export", str(suite), "--out", str(tmp_path / "B")]) == verdict
    assert main(["test", str(suite), "--server", llama_server]) == verdict
    code, results = _promptfoo(tmp_path / "B", llama_server, tmp_path)
    stats = results["stats"]
    # The "never" case fails on both samples, in promptfoo as in `maskscope test`; whether the
    # eval fails is the threshold's call, as `maskscope test` makes it.
    assert (stats["successes"], stats["failures"], stats["errors"]) == (2, 2, 0)
    assert code == exit_code, results["results"][0]["gradingResult"]
    by_row = {(r["testCase"]["description"], r["provider"]["label"]): r["success"]
              for r in results["results"]}  # fmt: skip
    assert by_row == {
        ("usd", "sample 1 (seed 0)"): True, ("usd", "sample 2 (seed 1)"): True,
        ("never", "sample 1 (seed 0)"): False, ("never", "sample 2 (seed 1)"): False,
    }  # fmt: skip
    # The suite's field accuracy, as promptfoo derives it for each sample's column.
    for column in results["prompts"]:
        assert column["metrics"]["namedScores"]["field_accuracy_rate"] == 0.5
