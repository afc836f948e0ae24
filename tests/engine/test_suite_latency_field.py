"""The suite's `thresholds.latency`: what max_p95_latency_ms holds (docs/suite-format.md)."""

from __future__ import annotations

import pytest

from engine.errors import SuiteError
from engine.suite.load import suite_from_json, suite_to_json

SUITE = {
    "format": "maskscope-suite",
    "version": 1,
    "name": "latency",
    "schema": {"type": "object"},
    "prompt": "{{x}}",
    "cases": [{"id": "a", "vars": {"x": "1"}}],
}


def test_wall_is_read_and_written_back_and_service_is_the_default():
    wall = suite_from_json(
        {**SUITE, "thresholds": {"max_p95_latency_ms": 900, "latency": "wall"}}, "."
    )
    assert wall.thresholds.latency == "wall"
    assert suite_to_json(wall)["thresholds"] == {"max_p95_latency_ms": 900.0, "latency": "wall"}
    plain = suite_from_json({**SUITE, "thresholds": {"max_p95_latency_ms": 900}}, ".")
    assert plain.thresholds.latency == "service"
    assert suite_to_json(plain)["thresholds"] == {"max_p95_latency_ms": 900.0}


@pytest.mark.parametrize("bad", ["queue", None, 1])
def test_another_value_is_one_located_error(bad):
    with pytest.raises(SuiteError, match=r'\$\.thresholds\.latency: "service" or "wall"'):
        suite_from_json({**SUITE, "thresholds": {"latency": bad}}, ".")
