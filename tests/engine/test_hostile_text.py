"""Hostile text is data in every report and bundle file: no element, heading or line it
brings in, no snippet it breaks, and every JSON or YAML value it sits in holds it exactly.

The text goes into the model's output, the schema (a description, an enum value, a property
name), the prompt, a case's variables and id, and the suite's name. Each page is rendered
twice, once with it and once with a plain word in the same places: the pages must have the
same elements, attribute for attribute, so nothing the text holds became markup.

The run results here are made up, not decoded: the point is rendering, and a model would
not write this text on request. The schema is compiled for real, and the Tested is the one
`maskscope export` would build from such a run.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.decode.loop import finish_run
from engine.grammar.compile import compile_schema
from engine.records import FinishReason, ValidationIssue
from engine.report import render_report
from engine.runs.provenance import Provenance
from engine.runs.saved import SavedRun, load_run
from engine.suite.bundle import tested as tested_module  # its Tested is no test class
from engine.suite.bundle.export import converter_gap, write_bundle
from engine.suite.bundle.promptfoo import nunjucks_prompt
from engine.suite.format import Thresholds
from engine.suite.junit import junit_xml
from engine.suite.load import suite_from_json
from engine.suite.metrics import evaluate, sample_from_run, summarise
from engine.suite.server.report import server_report

# What breaks HTML, Vue/Jinja/Nunjucks, JSON, Python, shell, YAML and Markdown.
HOSTILE = (
    "<script>alert(1)</script></textarea><img src=x onerror=alert(2)> {{ 7*7 }} {% endraw %}"
    " \"dq\" 'sq' ''' `tick` ``` $(touch pwned) ${HOME} \\ \n---\n# heading\n| a | b |\n"
    "- item: yes\n]]> \u2028 \x85 &amp; <!-- -->"
)
PLAIN = "plain"
CSP = "default-src 'none'"
RUNS = Path(__file__).parents[1] / "data" / "runs"


def schema_with(text: str) -> dict[str, Any]:
    return {
        "title": text,
        "description": text,
        "type": "object",
        "properties": {text: {"type": "string", "enum": [text, "other"], "description": text}},
        "required": [text],
        "additionalProperties": False,
    }


def suite_with(text: str) -> dict[str, Any]:
    return {
        "format": "maskscope-suite",
        "version": 1,
        "name": text,
        "description": text,
        "schema": schema_with(text),
        "prompt": "Note: {{note}}\n" + text + "\nJSON:\n",
        "generation": {"max_tokens": 16},
        "cases": [{"id": text, "vars": {"note": text}, "expected": {"$.x": text}}],
    }


@functools.cache
def made_tested(text: str) -> tested_module.Tested:
    suite = suite_from_json(suite_with(text), ".")
    compiled = compile_schema(json.dumps(suite.schema))
    settings = suite.settings()
    output = json.dumps({text: text})
    result = finish_run(output, compiled, FinishReason.END_OF_GENERATION, 9, text,
                        total_ms=50.0, setup_ms=0.0, prompt_ms=0.0, forward_ms=0.0,
                        mask_ms=0.0, settings=settings)  # fmt: skip
    sample = sample_from_run(text, 0, 0, result, (), expectations=suite.cases[0].expected)
    summary = summarise([sample], n_planned=1)
    provenance = Provenance(text + ".gguf", 10, "ab" * 32, 5, "0.3", "", "0.1", "gbnf",
                            "llguidance", settings.to_json(), "2026-12-01T20:00:00Z")  # fmt: skip
    verdict = evaluate(summary, Thresholds(min_validity=0.5))
    prompt = suite.prompt.replace("{{note}}", text)
    return tested_module.Tested(
        suite, compiled, summary, verdict, provenance, prompt, prompt, converter_gap(compiled), 0
    )


class _Elements(HTMLParser):
    """Every element and comment of a page, with its attributes, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, tuple[str, ...]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # A token beyond ASCII carries its code points in a title (a reader's fonts may lack
        # its script: issue 26): the hostile text has such tokens, the plain text none. The
        # title's value is escaped text; every other attribute must be the plain page's.
        names = (name for name, _ in attrs if not (tag == "span" and name == "title"))
        self.found.append((tag, tuple(sorted(names))))

    def handle_endtag(self, tag: str) -> None:
        self.found.append(("/" + tag, ()))

    def handle_comment(self, data: str) -> None:
        self.found.append(("!--", ()))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def elements(page: str) -> _Elements:
    parser = _Elements()
    parser.feed(page)
    parser.close()
    return parser


def assert_text_only(hostile_page: str, plain_page: str) -> None:
    """The hostile page has exactly the plain page's elements, no script, and its CSP."""
    hostile, plain = elements(hostile_page), elements(plain_page)
    assert hostile.found == plain.found
    assert not any(tag == "script" for tag, _ in hostile.found)
    assert CSP in hostile_page
    # The text survives as text, whole (the parser undoes the escaping).
    assert "<script>alert(1)</script></textarea><img src=x" in "".join(hostile.text)
    assert "{{" not in hostile_page  # a template engine the page is pasted into sees none


def test_the_run_report_shows_hostile_text_as_text() -> None:
    base = load_run(RUNS / "currency-v2.json")

    def run_with(text: str) -> SavedRun:
        step = dataclasses.replace(base.records[3], token_text=text, token_piece=text)
        records = (*base.records[:3], step, *base.records[4:])
        result = dataclasses.replace(
            base.result, text=json.dumps({text: text}), message=text,
            errors=(ValidationIssue(f"$.{text}", text),),
        )  # fmt: skip
        schema = json.dumps(schema_with(text), indent=2)
        return SavedRun(schema, text, text, records, result, base.provenance)

    assert_text_only(render_report(run_with(HOSTILE)), render_report(run_with(PLAIN)))


def test_the_server_report_shows_hostile_text_as_text() -> None:
    def page(text: str) -> str:
        server = {"url": "http://gpu:8080/" + text, "mode": "grammar", "model": text,
                  "response_format": ""}  # fmt: skip
        return server_report(made_tested(text), server)

    assert_text_only(page(HOSTILE), page(PLAIN))


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    write_bundle(root / "hostile", made_tested(HOSTILE))
    write_bundle(root / "plain", made_tested(PLAIN))
    return root / "hostile", root / "plain"


def test_the_bundle_report_shows_hostile_text_as_text(bundles) -> None:
    hostile, plain = (b / "report.html" for b in bundles)
    assert_text_only(hostile.read_text(encoding="utf-8"), plain.read_text(encoding="utf-8"))


def _outside_fences(markdown: str) -> tuple[str, list[str]]:
    """The README without its fenced blocks, and the blocks' contents. A fence closes only
    on a line of the same backticks, so the contents cannot end a block early."""
    blocks: list[str] = []

    def keep(m: re.Match[str]) -> str:
        blocks.append(m.group(2))
        return ""

    rest = re.sub(r"(?ms)^(`{3,})[^\n`]*\n(.*?)\n\1$", keep, markdown)
    return rest, blocks


def _blocks_of(markdown: str) -> list[str]:
    """What each line is to Markdown: a heading, rule, list item, quote, table row or text."""
    kinds = []
    for line in markdown.splitlines():
        marker = re.match(r"\s*(#{1,6} |[-*_]{3,}\s*$|[-*+] |\d+[.)] |>|\||=+\s*$)", line)
        kinds.append(marker.group(1).strip()[:1] if marker else "text")
    return kinds


def test_the_readme_shows_hostile_text_as_text(bundles) -> None:
    hostile, plain = (
        _outside_fences((b / "README.md").read_text(encoding="utf-8")) for b in bundles
    )
    (text, blocks), (plain_text, plain_blocks) = hostile, plain
    assert len(blocks) == len(plain_blocks)
    assert "```" not in text  # every fence opened was closed where the template closed it
    # Outside the blocks: the same lines, so no heading, rule, list or table row came in...
    assert len(text.splitlines()) == len(plain_text.splitlines())
    assert _blocks_of(text) == _blocks_of(plain_text)
    # ...no HTML, and no code span opened by the text (each backtick of it is escaped).
    assert not re.search(r"<[A-Za-z/!]", text)
    assert "\\`tick\\`" in text and "`tick`" not in text.replace("\\`", "")
    assert any(HOSTILE.rstrip("\n") in block for block in blocks)  # the prompt, verbatim


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_the_bundles_json_files_hold_the_text_exactly(bundles) -> None:
    bundle = bundles[0]
    assert json.loads((bundle / "schema.json").read_text(encoding="utf-8")) == schema_with(HOSTILE)
    suite = json.loads((bundle / "suite.json").read_text(encoding="utf-8"))
    want = suite_with(HOSTILE)
    assert suite["prompt"] == want["prompt"] and suite["name"] == HOSTILE
    assert suite["cases"][0]["vars"] == {"note": HOSTILE} and suite["cases"][0]["id"] == HOSTILE
    snippets = (
        "llama_server_grammar", "openai_response_format", "llama_server_response_format",
        "vllm_xgrammar", "sglang_llguidance",
    )  # fmt: skip
    for name in ("report.json", *(f"snippets/{s}.json" for s in snippets)):
        data = json.loads((bundle / name).read_text(encoding="utf-8"))
        assert any(HOSTILE in s for s in _strings(data)), name
    request = json.loads((bundle / "snippets/llama_server_grammar.json").read_text("utf-8"))
    assert request["prompt"] == made_tested(HOSTILE).model_prompt


def test_no_user_text_reaches_the_scripts(bundles) -> None:
    """post.py and llama_cpp_python.py read the prompt and grammar from the bundle's files:
    byte for byte the same scripts in the hostile and the plain bundle, and they compile."""
    for name in ("post.py", "llama_cpp_python.py", "servers.json"):
        hostile, plain = ((b / "snippets" / name).read_text(encoding="utf-8") for b in bundles)
        assert hostile == plain, name
        if name.endswith(".py"):
            compile(hostile, name, "exec")
    request = json.loads((bundles[0] / "snippets/llama_cpp_python_server.json").read_text("utf-8"))
    assert request["prompt"] == made_tested(HOSTILE).model_prompt  # what the scripts send


def test_the_promptfoo_config_parses_as_yaml_with_the_exact_values(bundles) -> None:
    text = (bundles[0] / "promptfooconfig.yaml").read_text(encoding="utf-8")
    config = yaml.safe_load(text)
    assert config["description"] == f"{HOSTILE} (exported by Maskscope)"
    assert config["prompts"] == [nunjucks_prompt(suite_with(HOSTILE)["prompt"])]
    (test,) = config["tests"]
    assert test["description"] == HOSTILE and test["vars"] == {"note": HOSTILE}
    schema = config["providers"][0]["config"]["response_format"]["schema"]
    assert schema == schema_with(HOSTILE)
    assert json.dumps(HOSTILE, ensure_ascii=False) in test["assert"][0]["value"]  # a JS literal
    # The header comments are comments only: the same keys as the plain bundle's config.
    plain = yaml.safe_load((bundles[1] / "promptfooconfig.yaml").read_text(encoding="utf-8"))
    assert set(config) == set(plain)


def test_the_junit_report_parses_with_the_exact_names() -> None:
    tested = made_tested(HOSTILE)
    root = ET.fromstring(junit_xml(tested.summary, tested.verdict, HOSTILE))
    assert next(root.iter("testsuite")).get("name") == HOSTILE
    assert HOSTILE in [case.get("name") for case in root.iter("testcase")]
