"""Work beside the forward pass: a step's record, and the next step's mask and noise, made
on a helper thread while the decode thread runs llama.cpp (ctypes drops the GIL inside it).

With a core to spare (or a GPU doing the forward pass), the decode thread hands each step's
work to one helper thread and runs the next forward pass; the helper makes, in this order,
the next step's mask and masked noise (which that step waits for), this step's record
(handed over once the forward pass is done) and the noise of the step after. One helper, not
one per kind of work: on a machine with one core to spare, two would take turns on it and
each would finish later. Running the forward pass on the decode thread, not on a thread of
its own, saves two thread wake-ups a step (measured: 0.99 -> 0.66 ms of step time beside
the forward pass). When llama.cpp already uses every core, work beside it only stalls its
threads, so then it all runs in turn.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from engine.decode.stepper import Ahead, Decided, Stepper
from engine.records import StepRecord

_Task = tuple[Callable[[], Any], bool]  # the work, and whether it answers


class _Helper:
    """One thread that runs tasks in the order given; the answers of those that answer are
    read back in that order. Two SimpleQueues and no Future or lock per task: a
    ThreadPoolExecutor's hand-over cost the step 10-15 us more on its critical path
    (measured on the fast workload with a free core, alternating in one process)."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None  # started by the first task

    def _serve(self) -> None:
        while (task := self._tasks.get()) is not None:
            work, answers = task
            try:
                out = work()
            except BaseException as exc:  # raised where the answer is read
                out = exc
            if answers:
                self._answers.put(out)

    def submit(self, work: Callable[[], Any], answers: bool = True) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="beside-forward", daemon=True)
            self._thread.start()
        self._tasks.put((work, answers))

    def answer(self) -> Any:
        """The next answer, once its task is done; its exception is raised here."""
        out = self._answers.get()
        if isinstance(out, BaseException):
            raise out
        return out

    def shutdown(self) -> None:
        """Once the tasks given so far are done."""
        if self._thread is not None:
            self._tasks.put(None)
            self._thread.join()


class Overlap:
    """When a step's record and the next mask are made: now, or beside the forward pass."""

    def __init__(self, stepper: Stepper, enabled: bool) -> None:
        self._stepper = stepper
        self._enabled = enabled
        self._helper = _Helper()
        # Whether the helper holds a step's task, whose answer is the next step's mask and
        # noise (or what stopped it) and this step's record.
        self._beside = False
        self._ahead: Ahead | BaseException | None = None  # the next step's, once collected

    def ahead(self) -> Ahead:
        """This step's mask and noise, made during the forward pass (on the first step, now)."""
        got, self._ahead = self._ahead, None
        if got is None:  # the first step: nothing ran ahead of it
            return self._stepper.ahead()
        if isinstance(got, BaseException):
            raise got
        return got

    def hand_off(self, decided: Decided) -> StepRecord | None:
        """The step's record now; or None, when it is made beside the next forward pass
        (collect() hands it over) while the next mask is made or checked ahead."""
        stepper = self._stepper
        if not self._enabled or decided.finish is not None:
            return stepper.record(decided)
        if stepper.draw is None:
            stepper.prepare_next()
        # One task a step: each hand-over to the helper costs the step a wake-up.
        self._helper.submit(partial(self._beside_forward, decided))
        self._beside = True
        return None

    def _beside_forward(self, decided: Decided) -> tuple[Ahead | BaseException | None, StepRecord]:
        """On the helper: first what the next step waits for, then this step's record; the
        noise of the step after is queued behind them."""
        stepper = self._stepper
        ahead: Ahead | BaseException | None = None
        if stepper.draw is not None:
            try:
                ahead = stepper.ahead()
            except BaseException as exc:  # raised where the next step asks for its mask
                ahead = exc
            self._helper.submit(stepper.draw.make_next, answers=False)
        return ahead, stepper.record(decided)

    def collect(self) -> StepRecord | None:
        """The record made beside the forward pass, if one was."""
        if not self._beside:
            return None
        self._beside = False
        self._ahead, record = self._helper.answer()
        return record

    def close(self) -> None:
        """Wait for the helper: never free what it still works on."""
        self._helper.shutdown()
