"""The JSON Schema of a `maskscope test --json` result, as the readers of one need it.

engine/suite/compare.py checks a result file against it before anything reads a field, so
that a damaged or hand-edited file is refused with the place of its first wrong field
instead of a KeyError or TypeError deep in a comparison or the window's results table. A key
is required only where a reader indexes it; every key that is there has its type, so a file
written before a key existed still reads. Counts and rates are bounded: a reader divides
them, and a float cannot hold every JSON integer.
"""

from __future__ import annotations

from typing import Any

from engine.suite.summary import FORMAT

_COUNT = {"type": "integer", "minimum": 0, "maximum": 2**53}
_RATE = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
_NUMBER = {"type": ["number", "null"], "minimum": -1e300, "maximum": 1e300}
_COUNT_OR_NULL = {"type": ["integer", "null"], "minimum": 0, "maximum": 2**53}
_TEXT = {"type": "string"}
_TEXT_OR_NULL = {"type": ["string", "null"]}
_SCALAR = {"type": ["number", "string", "boolean", "null"]}


def _object(required: list[str], properties: dict[str, Any], more: Any = True) -> dict:
    return {
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": more,
    }


def _list(items: Any) -> dict[str, Any]:
    return {"type": "array", "items": items}


_RATES = ("validity_rate", "truncation_rate", "field_accuracy", "mean_valid_mass",
          "min_valid_mass")  # fmt: skip
# The run's metrics: known ones typed, any a later Maskscope adds a scalar (printed as is).
_METRICS = _object([], {k: _RATE if k in _RATES else _NUMBER for k in (
    *_RATES, "n_samples", "n_cases", "n_steps", "n_overruled", "n_forced", "fields_ok",
    "fields_checked", "n_tokens", "tokens_per_s", "latency_ms_p50", "latency_ms_p95",
    "n_runaway", "n_errors", "n_cancelled", "wall_s", "n_planned", "n_failed_open",
    "mean_logprob", "min_logprob")}, _SCALAR)  # fmt: skip

_SAMPLE_METRICS = _object(
    ["mean_valid_mass"],  # compare averages it per case
    {
        "n_tokens": _COUNT_OR_NULL,
        "tokens_per_s": _NUMBER,
        "latency_ms": _NUMBER,
        "mean_valid_mass": _RATE,
        "min_valid_mass": _RATE,
        "n_overruled": _COUNT_OR_NULL,
        "n_forced": _COUNT_OR_NULL,
        "whitespace_steps": _COUNT_OR_NULL,
        "longest_whitespace_run": _COUNT_OR_NULL,
        "longest_repeat": _COUNT_OR_NULL,
        "repeated_piece": _TEXT_OR_NULL,
        "runaway": {"type": ["boolean", "null"]},
        "runaway_reason": _TEXT_OR_NULL,
        "mean_logprob": _NUMBER,
        "min_logprob": _NUMBER,
    },
    _SCALAR,
)

_SAMPLE_SERVER = _object(
    [],
    {
        "failed_open": _TEXT,
        "grammar": _TEXT,
        "finish_reason": _TEXT,
        "retries": _COUNT,
        "tokens": _list(_TEXT),
        "logprobs": _list(_NUMBER | {"type": "number"}),
    },
)

_SAMPLE = _object(
    ["case", "index", "text", "metrics"],
    {
        "case": _TEXT,
        "index": _COUNT,
        "seed": {"type": "integer"},
        "text": _TEXT,
        "valid": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "finish_reason": _TEXT,
        "parse_error": _TEXT_OR_NULL,
        "errors": _list(_object(["path", "message"], {"path": _TEXT, "message": _TEXT})),
        "message": _TEXT,
        "fields": _list(_object(["ok"], {"path": _TEXT, "ok": {"type": "boolean"}, "why": _TEXT})),
        "failures": _list(_TEXT),
        "run_key": _TEXT_OR_NULL,  # engine/suite/cache.py check_key checks its form
        "metrics": _SAMPLE_METRICS,
        "server": _SAMPLE_SERVER,
    },
)

_CASE = _object(
    ["id", "validity_rate", "fields_ok", "fields_checked", "passed"],
    {
        "id": _TEXT,
        "n_samples": _COUNT,
        "n_valid": _COUNT,
        "validity_rate": _RATE,
        "fields_ok": _COUNT,
        "fields_checked": _COUNT,
        "passed": {"type": "boolean"},
        "failing_samples": _list(_COUNT),
        "missed_samples": _list(_COUNT),
        "worst_sample": _COUNT_OR_NULL,
    },
)

_THRESHOLD = _object(
    [],
    {
        "key": _TEXT,
        "metric": _TEXT,
        "limit": _NUMBER | {"type": "number"},
        "measured": _NUMBER,
        "passed": {"type": "boolean"},
        "text": _TEXT,
    },
)

_SERVER = _object(
    [],
    {k: _TEXT_OR_NULL for k in ("url", "mode", "model", "response_format")},
)

RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_object(
        ["format"],
        {
            "format": {"const": FORMAT},
            "version": {"type": "integer"},
            "suite": _TEXT,
            "passed": {"type": "boolean"},
            "exit_code": {"enum": [0, 1, 2]},
            "metrics": _METRICS,
            "server": _SERVER,
            "thresholds": _list(_THRESHOLD),
            "problems": _list(_TEXT),
            "cases": _list(_CASE),
            "samples": _list(_SAMPLE),
        },
    ),
}
