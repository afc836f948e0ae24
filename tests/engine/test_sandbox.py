"""engine/sandbox.py: a call that aborts, exhausts memory, hangs or is stopped ends only its
child process, and the caller gets one line that says which."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

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
            "engine.grammar.compilers.outlines.compiler", "regex_here", ({"type": "nope"},),
            what="outlines-core's compiler", limit_s=30,
        )  # fmt: skip


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG)")
def test_the_child_dies_with_the_process_that_started_it():
    # A check worker killed for hanging, or a CLI interrupted, must not leave a build running
    # for minutes: the kernel ends the child with its parent.
    script = (
        "from engine.sandbox import run_isolated\n"
        "run_isolated('time', 'sleep', (60,), what='the nap', limit_s=60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[2])
    try:
        child = _wait_for_child(parent.pid)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 2
        while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not Path(f"/proc/{child}").exists(), "the child outlived its parent"
    finally:
        parent.kill()


def _wait_for_child(parent: int) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for task in Path(f"/proc/{parent}/task").iterdir():
            children = (task / "children").read_text().split()
            if children:
                return int(children[0])
        time.sleep(0.05)
    raise AssertionError("the sandbox child did not start")
