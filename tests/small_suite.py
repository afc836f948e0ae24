"""The bundled currency suite cut down for a test's time: its first cases, few samples, a
short output."""

from __future__ import annotations

import dataclasses

from engine.suite.bundled import load_bundled_suite
from engine.suite.format import Suite, Thresholds


def currency_cut(
    cases: int = 1,
    samples: int = 1,
    max_tokens: int = 16,
    thresholds: Thresholds | None = None,
    no_latency_bound: bool = False,
) -> Suite:
    full = load_bundled_suite("currency")
    kept = thresholds or full.thresholds
    if no_latency_bound:  # a busy 2-core machine must not fail it on p95 latency
        kept = dataclasses.replace(kept, max_p95_latency_ms=None)
    return dataclasses.replace(
        full,
        cases=full.cases[:cases],
        samples=samples,
        generation={**full.generation, "max_tokens": max_tokens},
        thresholds=kept,
    )
