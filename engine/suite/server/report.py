"""`maskscope test SUITE --server URL --html FILE`: the self-contained report of a run on a
server. It is the bundle's page (engine/suite/bundle/report.py) told the server: it names the
server, its mode and the model the server reported instead of a local model file and its
hash, and shows n/a for what only local decoding measures (valid mass, overruled and forced
steps). The hashes it lists are those of the schema and of the tested grammar, the one sent
in grammar mode and the one the fail-open check read every output with.
"""

from __future__ import annotations

from engine.grammar.compile import compile_schema
from engine.model.llama import Model
from engine.suite.bundle.export import sha256_text, tested_with
from engine.suite.bundle.report import bundle_report
from engine.suite.bundle.tested import Tested
from engine.suite.format import Suite
from engine.suite.metrics import Summary, Verdict
from engine.suite.template import render_prompt


def server_tested(
    model: Model, suite: Suite, summary: Summary, verdict: Verdict, exit_code: int
) -> Tested:
    """What the report states of a server run. `model` is the local one that read the
    outputs back; its provenance gives the settings, the Maskscope version and the time."""
    settings = suite.settings()
    compiled = compile_schema(suite.schema_text, settings.compiler)
    user_prompt = render_prompt(suite.prompt, suite.cases[0].vars) if suite.cases else ""
    return tested_with(model, suite, compiled, summary, verdict, user_prompt, exit_code)


def server_report(tested: Tested, server: dict[str, str]) -> str:
    """The page; `server` is ServerInfo.to_json()."""
    hashes = {
        "schema": sha256_text(tested.suite.schema_text),
        "tested grammar": sha256_text(tested.grammar_text),
    }
    return bundle_report(tested, hashes, server)
