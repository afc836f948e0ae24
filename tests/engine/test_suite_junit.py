"""`maskscope test --junit`: one testsuite, a testcase per case and per threshold, valid
against the JUnit schemas CI tools read (tests/data/junit/README.md names them)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

import pytest
import xmlschema

from engine.records import FinishReason, RunResult, ValidationIssue
from engine.suite.format import Expectation, Thresholds
from engine.suite.junit import junit_xml
from engine.suite.metrics import evaluate, sample_from_run, summarise
from tests.engine.test_suite_metrics import _records, _result

SCHEMAS = Path(__file__).parent.parent / "data" / "junit"
USD = Expectation("$.currency", "equals", "USD")
WHEN = datetime(2026, 12, 1, 18, 30, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module", params=["junit-10.xsd", "ant-junit.xsd"])
def schema(request: pytest.FixtureRequest) -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(SCHEMAS / request.param)


def _sample(case: str, index: int, result: RunResult | None = None, latency_ms: float = 250.0):
    return sample_from_run(case, index, index, result or _result(), _records(["{", "}"]),
                           latency_ms=latency_ms, expectations=(USD,))  # fmt: skip


def _document(thresholds: Thresholds, extra: tuple = ()) -> str:
    cut = _result('{"currency": "US', FinishReason.MAX_TOKENS)
    stray = _result(errors=(ValidationIssue("$.note", "'a\x01b' is too long"),))
    samples = [_sample("usd", 0), _sample("usd", 1, cut), _sample("eur", 0, stray), *extra]
    summary = summarise(samples)
    return junit_xml(summary, evaluate(summary, thresholds), "currency", timestamp=WHEN,
                     hostname="ci-runner")  # fmt: skip


def _testcases(xml: str) -> dict[str, ET.Element]:
    return {f"{t.get('classname')}/{t.get('name')}": t for t in ET.fromstring(xml).iter("testcase")}


def test_a_failing_run_validates_and_lists_its_failing_samples_and_thresholds(schema):
    xml = _document(Thresholds(min_validity=0.9, max_truncation=0.5))
    schema.validate(xml)
    root = ET.fromstring(xml)
    assert (root.get("name"), root.get("tests"), root.get("failures"), root.get("errors")) == (
        "currency", "4", "3", "0",
    )  # fmt: skip
    assert root.get("timestamp") == "2026-12-01T18:30:05" and root.get("hostname") == "ci-runner"
    cases = _testcases(xml)
    usd = cases["currency.cases/usd"].find("failure")
    assert usd is not None
    assert (
        usd.get("message")
        == "1 of 2 samples failed: they count against validity 0.33 < 0.90 minimum"
    )
    assert "sample 2 (seed 1): truncated at max_tokens" in usd.text
    validity = cases["currency.thresholds/min_validity"].find("failure")
    assert validity.get("message") == "validity 0.33 < 0.90 minimum"
    assert cases["currency.thresholds/max_truncation"].find("failure") is None
    assert "FAILED (exit 1)" in root.find("system-out").text


def test_a_stray_control_character_in_an_error_message_leaves_the_document_readable(schema):
    xml = _document(Thresholds(min_validity=0.9))
    schema.validate(xml)
    eur = _testcases(xml)["currency.cases/eur"].find("failure")
    assert "'a\\x01b' is too long" in eur.text


def test_a_passing_run_has_no_failures(schema):
    summary = summarise([_sample("usd", 0), _sample("usd", 1)])
    xml = junit_xml(summary, evaluate(summary, Thresholds(min_validity=1.0)), "")
    schema.validate(xml)
    root = ET.fromstring(xml)
    assert (root.get("name"), root.get("tests"), root.get("failures")) == ("maskscope", "2", "0")
    assert not list(root.iter("failure")) and not list(root.iter("error"))


def test_an_engine_failure_and_an_unmeasurable_threshold_are_errors_not_failures(schema):
    broken = RunResult("", FinishReason.ERROR, 0, message="llama_decode returned -1")
    summary = summarise([sample_from_run("usd", 0, 0, broken, ())])
    verdict = evaluate(summary, Thresholds(min_field_accuracy=0.9))
    xml = junit_xml(summary, verdict, "currency", timestamp=WHEN)
    schema.validate(xml)
    root = ET.fromstring(xml)
    cases = _testcases(xml)
    assert root.get("errors") == "3" and root.get("failures") == "0"
    assert "llama_decode returned -1" in cases["currency.cases/usd"].find("error").text
    assert "not measured" in cases["currency.thresholds/min_field_accuracy"].find("error").text
    assert "the engine failed" in cases["currency/harness"].find("error").get("message")


def test_a_broken_document_fails_the_schema(schema):
    xml = _document(Thresholds(min_validity=0.9))
    broken = xml.replace('<testcase name="usd" ', "<testcase ", 1)  # a testcase without a name
    assert broken != xml
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        schema.validate(broken)
    misplaced = xml.replace("<properties>", "<failure />\n  <properties>", 1)
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        schema.validate(misplaced)
