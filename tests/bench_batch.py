"""A fixed batch table for the bench's report tests (tests/engine/test_bench.py and the
chart row's tests/app/test_step_chart_bench.py), built by the bench's own row_of."""

from __future__ import annotations

from typing import Any

from engine.bench.batch import Made, row_of


def fixed_batch() -> dict[str, Any]:
    """P = 1 makes 8 objects of 80 tokens in 10 s; P = 8 in 3 s (3.3×); decode cut at 64 steps
    takes 20 s one at a time and 10 s in a batch of 8 (2×), of which the forward passes took
    16 s and 6 s (2.67× alone); the peer is slower than both."""
    objects = {1: Made(80, 8, 10.0), 8: Made(80, 8, 3.0)}
    decode = {1: Made(512, 0, 20.0, 16.0), 8: Made(512, 0, 10.0, 6.0)}
    rows = [
        {
            "parallel": p,
            "objects": row_of(objects[p], objects[1], True),
            "decode": row_of(decode[p], decode[1], False),
        }
        for p in (1, 8)
    ]
    peer = {
        "objects": row_of(Made(80, 6, 20.0), objects[1], True),
        "decode": row_of(Made(512, 0, 40.0), decode[1], False),
    }
    return {
        "batch": rows,
        "batch_peer": peer,
        "batch_samples": 8,
        "batch_workloads": {"objects": "currency", "decode": "invoice"},
    }
