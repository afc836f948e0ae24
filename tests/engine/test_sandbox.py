"""engine/sandbox.py: a call that aborts, exhausts memory, hangs or is stopped ends only its
child process, and the caller gets one line that says which."""

from __future__ import annotations

import json
import time

import pytest

from engine.errors import GrammarError
from engine.sandbox import Stopped, run_isolated


def _nested_arrays(depth: int) -> str:
    schema: dict = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return json.dumps(schema)


def test_a_native_abort_past_the_memory_limit_is_a_grammar_error():
    # outlines-core itself, called past Maskscope's nesting guard: its regex for 26 nested
    # arrays needs gigabytes, and Rust aborts the process when the allocation fails.
    with pytest.raises(GrammarError) as failed:
        run_isolated(
            "outlines_core.json_schema", "build_regex_from_schema", (_nested_arrays(26),),
            what="outlines-core's compiler", limit_s=120, memory_bytes=1 << 30,
        )  # fmt: skip
    assert failed.value.message.startswith(
        "outlines-core's compiler ran out of memory (its limit: 1024 MiB)"
    )


def test_a_call_past_its_time_limit_is_killed_and_said():
    t0 = time.monotonic()
    with pytest.raises(GrammarError, match=r"^the nap did not finish in 0\.5 s$"):
        run_isolated("time", "sleep", (30,), what="the nap", limit_s=0.5)
    assert time.monotonic() - t0 < 10


def test_stop_ends_the_child():
    with pytest.raises(Stopped):
        run_isolated("time", "sleep", (30,), what="the nap", limit_s=60, should_stop=lambda: True)


def test_a_value_and_a_refusal_come_back():
    assert run_isolated("math", "factorial", (5,), what="x", limit_s=30) == 120
    with pytest.raises(GrammarError, match="outlines-core's compiler refused the schema"):
        run_isolated(
            "engine.grammar.outlines_compiler", "regex_here", ({"type": "nope"},),
            what="outlines-core's compiler", limit_s=30,
        )  # fmt: skip
