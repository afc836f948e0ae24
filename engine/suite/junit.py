"""A suite run as JUnit XML (`maskscope test --junit FILE`), for the test report CI shows.

One <testsuite>: one <testcase> per case and one per threshold the suite sets, failing with
the metric named ("validity 0.75 < 0.90 minimum"). A case fails only where its samples count
against a missed threshold (engine/suite/verdicts.py), so that the document has a failure
exactly when the exit code is 1; what samples missed otherwise (a field off its expected
value, with no field-accuracy threshold or within it) is listed in the <system-out>.

What makes the run no test result (the engine failed, a threshold had nothing to
measure) is an <error>, never a <failure>, as exit code 2 is never 1.

The document validates against both schemas CI tools read: the Jenkins xUnit plugin's
junit-10.xsd and the stricter Apache Ant JUnit schema (which wants properties, system-out,
system-err, a timestamp without a zone, a hostname, and at most one failure or error per
testcase). tests/engine/test_suite_junit.py validates against both.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from engine.suite.metrics import CaseSummary, Check, Summary, Verdict
from engine.suite.summary import summary_text
from engine.suite.verdicts import case_verdict, missed_lines, sample_line

# Characters XML 1.0 cannot hold at all, not even escaped: written as \xNN instead, so that a
# model's stray control byte cannot make the report unreadable.
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(ms: float) -> str:
    return f"{max(ms, 0.0) / 1000.0:.3f}"


def _sub(parent: ET.Element, tag: str, text: str = "", **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: _clean(v) for k, v in attrs.items()})
    if text:
        node.text = _clean(text)
    return node


def _case_testcase(
    parent: ET.Element, case: CaseSummary, verdict: Verdict, classname: str
) -> str | None:
    """Adds the case's testcase; returns "failure", "error" or None for how it ended."""
    node = _sub(
        parent,
        "testcase",
        name=case.case_id,
        classname=classname,
        time=_seconds(sum(s.latency_ms for s in case.samples)),
    )
    judged = case_verdict(case, verdict)
    if judged.kind is None:
        return None  # its misses, if any, are notes in the testsuite's system-out
    lines = [judged.message, *(sample_line(s) for s in judged.failing)]
    _sub(node, judged.kind, "\n".join(lines) + "\n", type="samples", message=judged.message)
    return judged.kind


def _threshold_testcase(parent: ET.Element, check: Check, classname: str) -> str | None:
    node = _sub(parent, "testcase", name=check.key, classname=classname, time="0.000")
    if check.passed:
        return None
    kind = "error" if check.measured is None else "failure"
    _sub(node, kind, check.text + "\n", type="threshold", message=check.text)
    return kind


def _harness_testcase(parent: ET.Element, problems: list[str], classname: str) -> str:
    node = _sub(parent, "testcase", name="harness", classname=classname, time="0.000")
    _sub(node, "error", "\n".join(problems) + "\n", type="harness", message=problems[0])
    return "error"


def _properties(parent: ET.Element, summary: Summary) -> None:
    props = _sub(parent, "properties")
    for name in ("validity_rate", "truncation_rate", "field_accuracy", "mean_valid_mass",
                 "min_valid_mass", "tokens_per_s", "latency_ms_p50", "latency_ms_p95",
                 "service_ms_p50", "service_ms_p95", "queue_ms_p50", "queue_ms_p95"):  # fmt: skip
        value = getattr(summary, name)
        _sub(props, "property", name=name, value="n/a" if value is None else f"{value:.6g}")
    for name in ("n_samples", "n_cases", "n_steps", "n_overruled", "n_forced", "n_runaway"):
        value = getattr(summary, name)  # the step counts are None for a run on a server
        _sub(props, "property", name=name, value="n/a" if value is None else str(value))


def _notes(summary: Summary, verdict: Verdict) -> str:
    """The misses that fail nothing, where every CI tool shows them: the Ant schema allows no
    output inside a testcase, and a <skipped> would say the case did not run."""
    missed = missed_lines(summary.cases, verdict)
    if not missed:
        return ""
    head = "\nMissed, but no missed threshold counts it (a measurement, not a failure):\n"
    return head + "".join(f"  {line}\n" for line in missed)


def junit_xml(
    summary: Summary,
    verdict: Verdict,
    suite_name: str,
    *,
    timestamp: datetime | None = None,
    hostname: str | None = None,
    server: dict[str, str] | None = None,
) -> str:
    """The JUnit XML document for one suite run. `timestamp` (when the run started, by
    default now) is written in UTC without a zone, as the Ant schema wants it; `server`
    (ServerInfo.to_json) names the server a --server run was made on."""
    name = suite_name.strip() or "maskscope"
    when = (timestamp or datetime.now(timezone.utc)).astimezone(timezone.utc)
    total_ms = (
        summary.wall_s * 1000.0
        if summary.wall_s is not None
        else sum(s.latency_ms for s in summary.samples)
    )
    root = ET.Element("testsuite")
    _properties(root, summary)
    ends = [_case_testcase(root, c, verdict, f"{name}.cases") for c in summary.cases]
    ends += [_threshold_testcase(root, c, f"{name}.thresholds") for c in verdict.checks]
    unmeasured = {c.text for c in verdict.checks if c.measured is None}
    harness = [p for p in verdict.problems if p not in unmeasured]
    if harness:
        ends.append(_harness_testcase(root, harness, name))
    _sub(
        root, "system-out", summary_text(summary, verdict, name, server) + _notes(summary, verdict)
    )
    _sub(root, "system-err")
    attrs = {
        "name": name,
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S"),
        "hostname": hostname or socket.gethostname() or "localhost",
        "tests": str(len(ends)),
        "failures": str(ends.count("failure")),
        "errors": str(ends.count("error")),
        "skipped": "0",
        "time": _seconds(total_ms),
    }
    for key, value in attrs.items():
        root.set(key, _clean(value))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
