"""Issue 22: JUnit, the JSON result, the HTML report, the bundle's README and the exit code
agree on what failed. The currency suite passed (exit 0) while its JUnit recorded the field
misses of gbp, yen and no-currency as 3 failed tests, so a CI reading JUnit failed a suite
that passed; the HTML report still called those cases failed after JUnit was mended."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
import xmlschema

from engine.grammar.compile import compile_schema
from engine.runs.provenance import Provenance
from engine.suite.bundle import tested as tested_module  # its Tested is no test class
from engine.suite.bundle.export import converter_gap
from engine.suite.bundle.readme import bundle_readme
from engine.suite.bundle.report import bundle_report
from engine.suite.format import Expectation, Thresholds
from engine.suite.junit import junit_xml
from engine.suite.load import suite_from_json
from engine.suite.metrics import Summary, Verdict, evaluate, sample_from_run, summarise
from engine.suite.summary import exit_code, summary_to_json
from tests.engine.test_suite_metrics import _records, _result

SCHEMAS = Path(__file__).parent.parent / "data" / "junit"
# The currency suite as measured on the default model: yen and none come out USD.
OUTPUTS = {"usd": "USD", "eur": "EUR", "gbp": "USD", "yen": "USD", "none": "USD"}
EXPECTED = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "yen": "UNKNOWN", "none": "UNKNOWN"}
CURRENCY = Thresholds(min_validity=0.95, max_truncation=0.05, min_field_accuracy=0.4)


SCHEMA = {"type": "object", "properties": {"currency": {"type": "string"}}}


class _CaseCells(HTMLParser):
    """The cells of the report's case table (the one headed "case, valid, fields, verdict"),
    as plain text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def _page(summary: Summary, verdict: Verdict, code: int) -> tuple[str, str]:
    """The bundle's report.html and README.md for the run."""
    cases = [{"id": c, "vars": {"x": c}} for c in OUTPUTS]
    suite = suite_from_json({"format": "maskscope-suite", "version": 1, "name": "currency",
                             "schema": SCHEMA, "prompt": "{{x}}", "cases": cases}, ".")  # fmt: skip
    compiled = compile_schema(json.dumps(SCHEMA))
    provenance = Provenance("m.gguf", 10, "ab" * 32, 5, "0.3", "", "0.1", "gbnf", "llguidance",
                            suite.settings().to_json(), "2026-12-01T20:00:00Z")  # fmt: skip
    tested = tested_module.Tested(suite, compiled, summary, verdict, provenance, "1", "1",
                                  converter_gap(compiled), code)  # fmt: skip
    return bundle_report(tested, {}), bundle_readme(tested, {})


def _html_failed(page: str) -> tuple[set[str], int]:
    """The cases the report's table does not call passed, and the exit code in its badge."""
    parser = _CaseCells()
    parser.feed(page)
    table = next(t for t in parser.tables if t[0] == ["case", "valid", "fields", "verdict"])
    failed = {row[0] for row in table[1:] if not row[3].startswith("passed")}
    return failed, int(re.search(r"· exit (\d)", page).group(1))


def _readme_failed(readme: str) -> set[str]:
    """The cases the README's case table does not call passed."""
    lines = readme.splitlines()
    start = lines.index("| case | valid | fields | verdict |") + 2  # past the |---| line
    rows = [r.split("|") for r in lines[start:]]
    rows = rows[: next((i for i, r in enumerate(rows) if len(r) < 5), len(rows))]
    return {r[1].strip() for r in rows if not r[4].strip().startswith("passed")}


def _run(thresholds: Thresholds, truncated: str = "") -> tuple[str, dict, int]:
    samples = []
    for case, got in OUTPUTS.items():
        expect = (Expectation("$.currency", "equals", EXPECTED[case]),)
        for i in range(2):
            text = json.dumps({"currency": got})
            result = _result(text)
            if case == truncated and i == 1:
                result = _result(text[:-3], _result().finish_reason.MAX_TOKENS)
            samples.append(sample_from_run(case, i, i, result, _records(["{", "}"]),
                                           latency_ms=100.0, expectations=expect))  # fmt: skip
    summary = summarise(samples)
    verdict = evaluate(summary, thresholds)
    xml = junit_xml(summary, verdict, "currency")
    code = exit_code(verdict)
    result = summary_to_json(summary, verdict, "currency")
    result["html"], result["readme"] = _page(summary, verdict, code)
    return xml, result, code


def _junit_failed(xml: str) -> tuple[set[str], set[str], int, int]:
    root = ET.fromstring(xml)
    failed = {t.get("name") for t in root.iter("testcase") if t.find("failure") is not None}
    errored = {t.get("name") for t in root.iter("testcase") if t.find("error") is not None}
    return failed, errored, int(root.get("failures")), int(root.get("errors"))


def _agree(xml: str, result: dict, code: int) -> set[str]:
    for name in ("junit-10.xsd", "ant-junit.xsd"):
        xmlschema.XMLSchema(SCHEMAS / name).validate(xml)
    failed, errored, failures, errors = _junit_failed(xml)
    assert (failures, errors) == (len(failed), len(errored))
    assert code == result["exit_code"] == (2 if errors else 1 if failures else 0)
    assert result["passed"] == (code == 0)
    json_failed = {c["id"] for c in result["cases"] if not c["passed"]}
    json_failed |= {t["key"] for t in result["thresholds"] if not t["passed"]}
    assert failed | errored == json_failed
    html_failed, html_code = _html_failed(result["html"])
    assert html_code == code
    assert html_failed == _readme_failed(result["readme"]) == {c["id"] for c in result["cases"]
                                                               if not c["passed"]}  # fmt: skip
    return failed


def test_field_misses_within_the_thresholds_fail_nothing_and_are_reported():
    xml, result, code = _run(CURRENCY)
    assert _agree(xml, result, code) == set() and code == 0
    out = ET.fromstring(xml).find("system-out").text
    for case in ("gbp", "yen", "none"):
        assert f'{case}, sample 1 (seed 0): $.currency is "USD", expected' in out
    missed = {c["id"]: c["missed_samples"] for c in result["cases"]}
    assert missed == {"usd": [], "eur": [], "gbp": [0, 1], "yen": [0, 1], "none": [0, 1]}


def test_field_misses_without_a_threshold_fail_nothing():
    xml, result, code = _run(Thresholds())
    assert _agree(xml, result, code) == set() and code == 0


def test_a_missed_field_accuracy_threshold_fails_the_cases_it_counts():
    xml, result, code = _run(Thresholds(min_field_accuracy=0.9))
    assert code == 1
    assert _agree(xml, result, code) == {"min_field_accuracy", "gbp", "yen", "none"}
    gbp = next(t for t in ET.fromstring(xml).iter("testcase") if t.get("name") == "gbp")
    assert "count against field accuracy 0.40 < 0.90 minimum" in gbp.find("failure").text


STRICT = Thresholds(min_validity=0.95, max_truncation=0.05, min_field_accuracy=0.3)


@pytest.mark.parametrize("thresholds", [STRICT, Thresholds(min_validity=0.5)])
def test_a_truncated_sample_fails_only_under_a_missed_threshold(thresholds):
    xml, result, code = _run(thresholds, truncated="usd")
    failed = _agree(xml, result, code)
    if thresholds is STRICT:  # validity 0.9 < 0.95 and truncation 0.1 > 0.05
        assert code == 1 and failed == {"usd", "min_validity", "max_truncation"}
    else:
        assert code == 0 and failed == set()
        assert next(c for c in result["cases"] if c["id"] == "usd")["missed_samples"] == [1]
