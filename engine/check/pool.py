"""Worker processes that survive what they run: a task that kills its worker (a native crash
in llama.cpp) or outlives its time becomes a result of its own, and a fresh worker goes on.

Each worker runs `init` once (loading the model) and then one task at a time, so the parent
always knows which task a dead worker was on. Workers are spawned, not forked: the parent
may have loaded llama.cpp and its threads.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

from engine.errors import MaskscopeError

T = TypeVar("T")
R = TypeVar("R")
# How a task that gave no result is described to `lost`.
CRASHED, HUNG = "crashed: ", "hung: "


@dataclass
class _Worker(Generic[T]):
    process: multiprocessing.process.BaseProcess
    conn: Connection
    ready: bool = False
    task: int | None = None  # index of the task it is on
    deadline: float = field(default=float("inf"))


def run_pool(
    tasks: Sequence[T],
    init: Callable[[], Any],
    work: Callable[[Any, T], R],
    lost: Callable[[T, str], R],
    jobs: int,
    timeout: float,
) -> Iterator[tuple[int, R]]:
    """(index, result) for every task, in the order they finish. `lost(task, why)` stands
    in for the result of a task whose worker died or ran past `timeout` seconds; `why` is
    "crashed: <signal>" or "hung: ...". `init` and `work` must be module-level functions."""
    ctx = multiprocessing.get_context("spawn")
    pending = list(range(len(tasks)))[::-1]
    workers: list[_Worker[T]] = []

    def start() -> None:
        parent, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, init, work), daemon=True)
        process.start()
        child.close()
        workers.append(_Worker(process, parent))

    try:
        for _ in range(max(1, min(jobs, len(tasks)))):
            start()
        done = 0
        while done < len(tasks):
            for w in workers:
                if w.ready and w.task is None and pending:
                    w.task = pending.pop()
                    w.deadline = time.monotonic() + timeout
                    w.conn.send(tasks[w.task])
            soonest = min((w.deadline for w in workers), default=float("inf"))
            wait_for = max(0.0, soonest - time.monotonic()) if soonest < float("inf") else None
            ready = wait(
                [w.conn for w in workers] + [w.process.sentinel for w in workers], wait_for
            )
            for w in list(workers):
                outcome = _outcome(w, ready, timeout)
                if outcome is None:
                    continue
                if isinstance(outcome, _Ready):
                    w.ready = True
                    continue
                assert w.task is not None
                index, w.task, w.deadline = w.task, None, float("inf")
                if isinstance(outcome, _Lost):
                    _stop(w)
                    workers.remove(w)
                    if pending:
                        start()
                    outcome = lost(tasks[index], outcome.why)
                done += 1
                yield index, outcome
    finally:
        for w in workers:
            _stop(w)


@dataclass(frozen=True, slots=True)
class _Lost:
    why: str


@dataclass(frozen=True, slots=True)
class _Ready:
    """A worker's first word: `init` is done."""


@dataclass(frozen=True, slots=True)
class _InitFailed:
    reason: str


def _outcome(w: _Worker[Any], ready: list[Any], timeout: float) -> Any:
    """What this worker has to say now: _Ready, a result, a _Lost, or None (nothing yet)."""
    if w.conn in ready:
        try:
            message = w.conn.recv()
        except (EOFError, OSError):  # it died: wait for the exit status that says how
            w.process.join(10)
        else:
            if isinstance(message, _InitFailed):
                raise MaskscopeError(f"a check worker could not start: {message.reason}")
            return message
    if w.process.sentinel in ready or not w.process.is_alive():
        w.process.join()
        if w.task is None and w.ready:
            raise MaskscopeError(f"a check worker died while idle ({_death(w.process.exitcode)})")
        if w.task is None:
            raise MaskscopeError(
                f"a check worker died while starting ({_death(w.process.exitcode)})"
            )
        return _Lost(CRASHED + _death(w.process.exitcode))
    if w.task is not None and time.monotonic() >= w.deadline:
        return _Lost(f"{HUNG}no verdict after {timeout:g} s")
    return None


def _death(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _stop(w: _Worker[Any]) -> None:
    if w.process.is_alive():
        w.process.kill()
    w.process.join()
    w.conn.close()


def _serve(conn: Connection, init: Callable[[], Any], work: Callable[[Any, Any], Any]) -> None:
    # Ctrl-C reaches the whole process group: the parent alone handles it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        state = init()
    except MaskscopeError as exc:
        conn.send(_InitFailed(str(exc)))
        return
    conn.send(_Ready())
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        conn.send(work(state, task))
