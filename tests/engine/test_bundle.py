"""`maskscope export`: the bundle a team ships. Its llama-cpp-python snippet runs on the real
model and writes valid output, its GBNF loads back in llama.cpp, its hashes match the files
and what was tested, and hostile text is escaped in its report and README."""

from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from engine.cli.main import main
from engine.errors import GrammarError
from engine.grammar.compile import compile_schema
from engine.grammar.judge.llama_parser import check_gbnf
from engine.model.paths import default_model_path
from engine.records import FinishReason, RunResult
from engine.runs.provenance import model_digest
from engine.suite.bundle import export as bundling  # its names tested_of and Tested look like tests
from engine.suite.bundle.promptfoo import expectation_js, nunjucks_prompt
from engine.suite.bundle.readme import fenced, md
from engine.suite.format import Expectation
from engine.suite.load import load_suite
from engine.suite.metrics import sample_from_run
from engine.suite.run import SuiteRun
from tests.suite_files import export_on

HOSTILE = '<script>alert(1)</script> </textarea> {{ 1 }} "q"'  # {{ 1 }}: no placeholder
SCHEMA = {
    "title": HOSTILE,
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}
PROMPT = "Note: {{note}}\nIs the note good news? " + HOSTILE + "\nJSON:\n"
SUITE = {
    "format": "maskscope-suite",
    "version": 1,
    "name": "tiny bundle",
    "schema": SCHEMA,
    "generation": {"max_tokens": 20, "temperature": 0.0, "seed": 0},
    "prompt": PROMPT,
    "samples": 1,
    "cases": [
        {"id": "good", "vars": {"note": "We won the contract."}, "expected": {"$.ok": True}},
        {"id": "bad", "vars": {"note": "The server burned down."}},
    ],
    "thresholds": {"min_validity": 0.5},
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory, model) -> Path:
    """The tiny suite exported through the command line, on the real model."""
    root = tmp_path_factory.mktemp("bundle")
    suite = root / "tiny.suite.json"
    suite.write_text(json.dumps(SUITE), encoding="utf-8")
    return export_on(model, suite, root)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_hashes_match_the_files_and_what_was_tested(bundle):
    manifest = json.loads((bundle / "hashes.json").read_text(encoding="utf-8"))
    on_disk = {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == on_disk - {"hashes.json"}
    for path, sha in manifest["files"].items():
        assert _sha(bundle / path) == sha, path
    tested = manifest["tested"]
    suite = load_suite(str(bundle / "suite.json"))  # self-contained: reads schema.json
    assert tested["schema_sha256"] == _sha(bundle / "schema.json")
    assert tested["schema_sha256"] == hashlib.sha256(suite.schema_text.encode()).hexdigest()
    recompiled = compile_schema(suite.schema_text, suite.compiler).gbnf
    assert tested["grammar_sha256"] == _sha(bundle / "grammar.gbnf")
    assert (bundle / "grammar.gbnf").read_text(encoding="utf-8") == recompiled
    assert tested["model_sha256"] == model_digest(default_model_path())[1]
    assert [c.id for c in suite.cases] == ["good", "bad"] and suite.prompt == PROMPT


def test_the_exported_gbnf_loads_back_in_llama_cpp(bundle):
    # LlamaGrammar.from_string only keeps the text; llama.cpp's own parser is the judge.
    gbnf = (bundle / "grammar.gbnf").read_text(encoding="utf-8")
    check_gbnf(gbnf)  # raises GrammarError with llama.cpp's message
    with pytest.raises(GrammarError):
        check_gbnf(gbnf.replace("root ::=", "root ::= (", 1))  # the same check can fail


@pytest.mark.slow
def test_the_llama_cpp_python_snippet_writes_valid_output(bundle):
    script = bundle / "snippets" / "llama_cpp_python.py"
    done = subprocess.run(
        [sys.executable, str(script), str(default_model_path())],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    schema = json.loads((bundle / "schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(done.stdout), schema)


@pytest.mark.slow
def test_the_llama_cpp_python_snippet_turns_off_the_samplers_maskscope_does_not_use(
    bundle, monkeypatch, capsys
):
    import importlib.util

    from llama_cpp import Llama

    # Samplers leave no trace in the output, so the real Llama's create_completion is
    # wrapped to see what the snippet gives it; the call itself goes through.
    given: dict = {}

    class Seen(Llama):
        def create_completion(self, prompt, **kwargs):
            given.update(kwargs)
            return super().create_completion(prompt, **kwargs)

    monkeypatch.syspath_prepend(str(bundle / "snippets"))  # its `from post import check`
    spec = importlib.util.spec_from_file_location(
        "snippet", bundle / "snippets/llama_cpp_python.py"
    )
    assert spec is not None and spec.loader is not None
    snippet = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(snippet)
        monkeypatch.setattr(snippet, "Llama", Seen)
        assert snippet.main(["llama_cpp_python.py", str(default_model_path())]) == 0
    finally:
        sys.modules.pop("post", None)
    # llama-cpp-python 0.3.36 (Llama._init_sampler) adds top-k, top-p, min-p and the
    # penalties to every sampled run, at 40, 0.95, 0.05 unless told; these make each a no-op.
    assert {k: given[k] for k in ("top_k", "top_p", "min_p", "repeat_penalty")} == {
        "top_k": 0,
        "top_p": 1.0,
        "min_p": 0.0,
        "repeat_penalty": 1.0,
    }
    assert (given["max_tokens"], given["seed"]) == (20, SUITE["generation"]["seed"])
    assert given["temperature"] == SUITE["generation"]["temperature"]
    assert "grammar" in given and capsys.readouterr().out.strip()


def test_the_reports_say_what_was_tested(bundle):
    report = json.loads((bundle / "report.json").read_text(encoding="utf-8"))
    assert report["exit_code"] == 0 and report["metrics"]["n_samples"] == 2
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    size, sha = model_digest(default_model_path())
    assert sha in readme and f"{size:,} bytes" in readme and "**PASSED**" in readme
    assert "met: validity 1.00 ≥ 0.50 minimum" in readme
    page = (bundle / "report.html").read_text(encoding="utf-8")
    assert "script-src" not in page and "default-src 'none'" in page
    assert "<script" not in page
    # What promptfoo's exit code carries of the thresholds, in all three
    # (engine/suite/bundle/promptfoo_gate.py): min_validity, 1 of 2 rows valid.
    assert report["promptfoo"] == {"pass_rate_threshold": 25.0, "rows": 2, "rows_needed": 1,
                                   "carried": ["min_validity"], "not_carried": []}  # fmt: skip
    carried = "promptfoo's exit code carries the suite's `min_validity` (validity)"
    assert f"- {carried}" in readme and "at least 1 of its 2 rows" in readme
    assert "<h3>In promptfoo</h3>" in page and html.escape(carried) in page


def test_the_requests_carry_the_tested_grammar_and_the_schema(bundle):
    grammar = json.loads((bundle / "snippets/llama_server_grammar.json").read_text())
    assert grammar["grammar"] == (bundle / "grammar.gbnf").read_text(encoding="utf-8")
    assert grammar["prompt"].startswith("Note: We won the contract.")
    assert grammar["n_predict"] == 20 and grammar["top_k"] == 0  # samplers off, as tested
    python = json.loads((bundle / "snippets/llama_cpp_python_server.json").read_text())
    assert python["grammar"] == grammar["grammar"] and python["max_tokens"] == 20
    assert "n_predict" not in python  # llama-cpp-python's server ignores it
    chat = json.loads((bundle / "snippets/llama_server_response_format.json").read_text())
    assert chat["response_format"]["json_schema"]["schema"] == SCHEMA and "grammar" not in chat
    openai = json.loads((bundle / "snippets/openai_response_format.json").read_text())
    fmt = openai["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"] == SCHEMA
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", fmt["json_schema"]["name"])
    servers = json.loads((bundle / "snippets/servers.json").read_text())
    assert servers["llama_server_grammar.json"]["path"] == "/completion"
    assert servers["llama_cpp_python_server.json"]["path"] == "/v1/completions"


def test_promptfoo_config_is_json_compatible_yaml_with_the_cases(bundle):
    text = (bundle / "promptfooconfig.yaml").read_text(encoding="utf-8")
    # PyYAML is not a dependency; the file is JSON after its comment lines, and JSON is YAML.
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    config = json.loads(body)
    try:
        import yaml  # not a dependency: checked where it happens to be installed
    except ImportError:
        pass
    else:
        assert yaml.safe_load(text) == config
    good, bad = config["tests"]
    assert good["description"] == "good" and good["vars"] == {"note": "We won the contract."}
    assert [a["type"] for a in good["assert"]] == ["javascript"]  # $.ok equals true
    assert bad["vars"] == {"note": "The server burned down."} and "assert" not in bad
    # promptfoo's Ajv reads a draft-07 copy of the schema (engine/suite/bundle/promptfoo_schema.py).
    # min_validity decides promptfoo's verdict (engine/suite/bundle/promptfoo_gate.py): a test
    # passes when its output is valid, its two checks outweighing the field's, and the eval
    # when 1 of its 2 samples is.
    checked = [
        {"type": "is-json", "value": "file://schema.promptfoo.json", "metric": "is_json"},
        {"type": "not-finish-reason", "value": "length", "metric": "complete"},
    ]
    assert config["defaultTest"]["assert"] == [{**a, "weight": 2} for a in checked]
    assert (good["threshold"], bad["threshold"]) == (3.5 / 5, 3.5 / 4)
    assert config["env"] == {"PROMPTFOO_PASS_RATE_THRESHOLD": "25"}
    assert json.loads((bundle / "schema.promptfoo.json").read_text(encoding="utf-8"))
    provider = config["providers"][0]["config"]
    assert provider["apiBaseUrl"].startswith("{{ env.MASKSCOPE_BASE_URL | default(")
    assert provider["response_format"]["type"] == "json_object"  # both llama.cpp servers'
    assert config["prompts"] == [nunjucks_prompt(PROMPT)]
    assert config["providers"][0]["config"]["max_tokens"] == 20


def test_nunjucks_prompt_keeps_placeholders_and_raws_other_markup():
    assert nunjucks_prompt("a {{ x }} b") == "a {{ x }} b"
    assert (
        nunjucks_prompt("{{x}} {{ not a var }}") == "{{ x }}{% raw %} {{ not a var }}{% endraw %}"
    )
    out = nunjucks_prompt("{% endraw %}{#")
    assert out == "{% raw %}{% endraw %}{{ '{% endraw %}' }}{% raw %}{#{% endraw %}"


def _hostile_tested(bundle: Path, model) -> bundling.Tested:
    """The exported suite's Tested, for one sample whose case id and output are hostile."""
    suite = dataclasses.replace(load_suite(str(bundle / "suite.json")), description=HOSTILE)
    result = RunResult(HOSTILE, FinishReason.MAX_TOKENS, 5)
    sample = sample_from_run(HOSTILE, 0, 0, result, (), expectations=())
    return bundling.tested_of(model, suite, SuiteRun((sample,), (), False, 0, 1.0, planned=1))


def _outside_fences(markdown: str) -> str:
    return re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1$", "", markdown)


def test_hostile_text_is_escaped_in_the_report_and_readme(bundle, model, tmp_path):
    bundling.write_bundle(tmp_path, _hostile_tested(bundle, model))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    for raw in ("<script", "</textarea", "{{", '"q"'):
        assert raw not in page, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&#123;&#123; 1 &#125;&#125;" in page
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    outside = _outside_fences(readme)
    for raw in ("<script", "</textarea", "{{"):  # {{: Liquid, on GitHub Pages
        assert raw not in outside, raw
    assert md(HOSTILE) in outside  # the hostile case id, description and failure, escaped
    assert "NO RESULT" not in readme and "**FAILED**" in readme


def _rendered(markdown: str) -> str:
    """The page GitHub would make of it: CommonMark, its tables and strikethrough."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)


def _plain_prose(readme: str) -> str:
    """The README's own text: fenced blocks and code spans left out."""
    return re.sub(r"(`+).*?\1", "", _outside_fences(readme))


def test_the_readme_escapes_only_what_markdown_would_read_as_markup(bundle, model, tmp_path):
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    prose = _plain_prose(readme)
    assert "\\." not in prose and "\\_" not in prose and "\\-" not in prose
    assert "| model file | `gemma-3-270m-q4_k_m.gguf` |" in readme  # a file name as code
    assert "<td><code>gemma-3-270m-q4_k_m.gguf</code></td>" in _rendered(readme)

    name = "a | b *c* `d` <script>x</script> _e_ [f](g) {{ h }} q4_k_m 1.00"
    for description in ("# not a heading", "- not a list", "1. not a list", name):
        suite = dataclasses.replace(
            load_suite(str(bundle / "suite.json")), name=name, description=description
        )
        sample = sample_from_run(name, 0, 0, RunResult("{", FinishReason.MAX_TOKENS, 5), ())
        run = SuiteRun((sample,), (), False, 0, 1.0, planned=1)
        bundling.write_bundle(tmp_path, bundling.tested_of(model, suite, run))
        page = _rendered((tmp_path / "README.md").read_text(encoding="utf-8"))
        assert "<script>" not in page and "<em>" not in page and "<a " not in page
        assert f"<h1>Tested schema: {html.escape(name, quote=False)}</h1>" in page
        assert f"<p>{html.escape(description, quote=False)}</p>" in page  # no heading, no list
        assert f"<td>{html.escape(name, quote=False)}</td>" in page  # the case id: one cell


def test_fenced_blocks_outlast_backticks_inside():
    block = fenced("a ```` b")
    assert block.startswith("`````\n") and block.endswith("\n`````")


def test_an_llguidance_suite_ships_its_own_grammar_and_no_gbnf_snippet(bundle, model, tmp_path):
    tested = _hostile_tested(bundle, model)
    compiled = compile_schema(tested.suite.schema_text, "llguidance")
    bundling.write_bundle(tmp_path, dataclasses.replace(tested, compiled=compiled))
    assert not (tmp_path / "grammar.gbnf").exists()
    assert not (tmp_path / "snippets/llama_cpp_python.py").exists()
    shipped = (tmp_path / "grammar.llguidance.json").read_text(encoding="utf-8")
    assert shipped == compiled.native
    manifest = json.loads((tmp_path / "hashes.json").read_text(encoding="utf-8"))
    assert manifest["tested"]["grammar_sha256"] == _sha(tmp_path / "grammar.llguidance.json")
    assert "not GBNF" in (tmp_path / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("compiler", "file"),
    [("outlines", "grammar.outlines.regex"), ("xgrammar", "grammar.xgrammar.ebnf")],
)
def test_a_suite_on_another_engine_ships_that_engines_grammar(
    bundle, model, tmp_path, compiler, file
):
    tested = _hostile_tested(bundle, model)
    compiled = compile_schema(tested.suite.schema_text, compiler)
    bundling.write_bundle(tmp_path, dataclasses.replace(tested, compiled=compiled))
    assert not (tmp_path / "grammar.gbnf").exists()
    assert (tmp_path / file).read_text(encoding="utf-8") == compiled.native
    manifest = json.loads((tmp_path / "hashes.json").read_text(encoding="utf-8"))
    assert manifest["tested"]["grammar_sha256"] == _sha(tmp_path / file)
    assert "not GBNF" in (tmp_path / "README.md").read_text(encoding="utf-8")


def test_a_failing_suite_is_exported_as_failed_over_the_old_bundle(bundle, model, capsys):
    root = bundle.parent
    failing = {**SUITE, "thresholds": {"min_field_accuracy": 1.0}}
    failing["cases"] = [{**SUITE["cases"][0], "expected": {"$.ok": False}}, SUITE["cases"][1]]
    suite = root / "failing.suite.json"
    suite.write_text(json.dumps(failing), encoding="utf-8")
    out = root / "again"
    (out / "snippets").mkdir(parents=True)
    stale = out / "snippets" / "old.py"
    stale.write_text("# from an earlier bundle\n")
    (out / "hashes.json").write_text(json.dumps({"files": {"snippets/old.py": "0"}}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("engine.suite.cache.default_folder", lambda: root / "cache")
        mp.setattr("engine.model.llama.Model.load", lambda *a, **k: model)
        assert main(["export", str(suite), "--out", str(out), "--samples", "2"]) == 1
    captured = capsys.readouterr()
    assert "4/4 samples · 2 cached" in captured.err  # seeds 0 read back, seeds 1 decoded
    assert json.loads((out / "suite.json").read_text())["samples"] == 2
    assert "FAILED (exit 1)" in captured.out
    assert not stale.exists()
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "**FAILED**" in readme and "MISSED: field accuracy 0.00 &lt; 1.00 minimum" in readme
    assert json.loads((out / "report.json").read_text())["exit_code"] == 1


def test_a_folder_that_holds_no_bundle_is_refused_before_the_run(tmp_path, capsys):
    suite = tmp_path / "tiny.suite.json"
    suite.write_text(json.dumps(SUITE), encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    assert main(["export", str(suite), "--out", str(tmp_path / "out")]) == 2
    assert "holds no bundle" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["notes.txt"]


def test_a_cancelled_run_writes_no_bundle(model, tmp_path):
    from engine.suite.cache import RunCache
    from engine.suite.load import suite_from_json

    suite = suite_from_json(SUITE, tmp_path)
    done = bundling.export_suite(
        model, suite, tmp_path / "out", cache=RunCache(tmp_path / "c"), should_stop=lambda: True
    )
    assert done.run.cancelled and done.tested is None and not (tmp_path / "out").exists()


def test_the_shipped_suite_holds_its_cases_file_inline_and_reads_schema_json(model, tmp_path):
    from engine.suite.load import suite_from_json

    (tmp_path / "cases.csv").write_text("id,note,expected.ok\nwin,We won.,true\n")
    (tmp_path / "schema.v2.json").write_text(json.dumps(SCHEMA, indent=4) + "\r\n")
    data = {k: v for k, v in SUITE.items() if k != "schema"}
    data |= {"schema_file": "schema.v2.json", "cases_file": "cases.csv"}
    suite = suite_from_json(data, tmp_path)
    run = SuiteRun((), (), False, 0, 0.0, planned=0)
    bundling.write_bundle(tmp_path / "out", bundling.tested_of(model, suite, run))
    shipped = json.loads((tmp_path / "out" / "suite.json").read_text())
    assert shipped["schema_file"] == "schema.json" and "cases_file" not in shipped
    back = load_suite(str(tmp_path / "out" / "suite.json"))
    assert back.schema_text == suite.schema_text
    assert [(c.id, c.vars, c.expected) for c in back.cases] == [
        (c.id, c.vars, c.expected) for c in suite.cases
    ]
    assert [c.id for c in back.cases] == ["good", "bad", "win"]


def test_the_exported_grammar_accepts_the_tested_outputs(bundle, model):
    from engine.check.feed import grammar_accepts

    gbnf = (bundle / "grammar.gbnf").read_text(encoding="utf-8")
    outputs = [s["text"] for s in json.loads((bundle / "report.json").read_text())["samples"]]
    assert len(outputs) == 2
    assert all(grammar_accepts(model, gbnf, text) for text in outputs)
    assert not grammar_accepts(model, gbnf, '{"ok": "yes"}')


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run JavaScript")
def test_expected_values_become_javascript_assertions_that_hold_where_they_do():
    cases = [
        (Expectation("$.ok", "equals", True), '{"ok": true}', '{"ok": 1}'),
        (Expectation("$.a", "equals", {"x": [1, 2]}), '{"a": {"x": [1.0, 2]}}', '{"a": {}}'),
        (Expectation('$.items[0]["unit price"]', "tolerance", 2.5, 0.01),
         '{"items": [{"unit price": 2.505}]}', '{"items": []}'),
        (Expectation("$.code", "regex", "[A-Z]{3}"), '{"code": "EUR"}', '{"code": "EURO"}'),
    ]  # fmt: skip
    for expectation, passing, failing in cases:
        js = expectation_js(expectation)
        for output, want in ((passing, True), (failing, False)):
            program = f"const output = {json.dumps(output)}; console.log(String({js}));"
            done = subprocess.run(
                ["node", "-e", program], capture_output=True, text=True, timeout=30, check=True
            )
            assert done.stdout.strip() == str(want).lower(), (expectation, output)
