"""Workers that die or hang become results of their own, and the run goes on."""

from __future__ import annotations

import os
import signal
import time

import pytest

from engine.check.pool import run_pool
from engine.errors import MaskscopeError


def _init() -> str:
    return "state"


def _work(state: str, task: object) -> object:
    if task == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if task == "hang":
        time.sleep(60)
    return (state, task)


def _lost(task: object, why: str) -> object:
    return ("lost", task, why)


def _bad_init() -> str:
    raise MaskscopeError("no model here")


@pytest.mark.slow
def test_a_crash_and_a_hang_are_reported_and_the_other_tasks_finish():
    tasks = [1, "crash", 2, "hang", 3, 4]
    got = dict(run_pool(tasks, _init, _work, _lost, jobs=2, timeout=3))
    assert got[0] == ("state", 1) and got[2] == ("state", 2) and got[5] == ("state", 4)
    assert got[1] == ("lost", "crash", "crashed: killed by SIGSEGV")
    assert got[3] == ("lost", "hang", "hung: no verdict after 3 s")
    assert len(got) == len(tasks)


@pytest.mark.slow
def test_a_worker_that_cannot_start_stops_the_run():
    with pytest.raises(MaskscopeError, match="could not start: no model here"):
        list(run_pool([1], _bad_init, _work, _lost, jobs=1, timeout=5))
