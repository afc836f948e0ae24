"""File-provided strings shown as rich text read literally, and the run's validation
never fetches a remote `$ref`: it says in words why that part was not checked."""

from __future__ import annotations

import urllib.request

import pytest
from PySide6.QtGui import QTextDocument

from app.decoding.violations import find_violations
from app.suite.results_view import ResultsView

HOSTILE = ["<img src=x>", "<a href='https://example.com/'>click</a>", "&lt;b&gt;"]


def _shown(rich: str) -> str:
    """What a rich-text label shows of `rich`, as plain text."""
    document = QTextDocument()
    document.setHtml(rich)
    return document.toPlainText()


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_result_files_values_are_shown_literally(qtbot, hostile: str) -> None:
    view = ResultsView()
    qtbot.addWidget(view)
    data = {
        "suite": hostile,
        "passed": False,
        "problems": [hostile],
        "thresholds": [{"text": hostile, "passed": False}],
        "metrics": {"n_samples": hostile, "n_cases": hostile},
        "samples": [],
    }
    view.show_result(data, f"{hostile}.json")
    shown = _shown(view.summary.text())
    assert f"suite {hostile}" in shown
    assert f"Result file {hostile}.json" in shown
    assert f"No verdict: {hostile}" in shown
    assert f"{hostile} samples of {hostile} cases" in shown  # the numbers were not escaped


def test_a_remote_ref_is_never_fetched_and_says_why(monkeypatch) -> None:
    fetched: list[object] = []

    def no_network(*args: object, **kwargs: object) -> None:
        fetched.append(args)
        raise OSError("the test has no network")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "https://example.com/remote.schema.json"}},
    }
    [violation] = find_violations(schema, '{"a": 1}', {"a": 1}, [])
    assert fetched == []
    assert violation.keyword == "$ref"
    assert "remote references are not supported" in violation.message
    assert "https://example.com/remote.schema.json" in violation.message
