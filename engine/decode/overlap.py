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

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from engine.decode.stepper import Ahead, Decided, Stepper
from engine.records import StepRecord

T = TypeVar("T")


class Overlap:
    """When a step's record and the next mask are made: now, or beside the forward pass."""

    def __init__(self, stepper: Stepper, enabled: bool) -> None:
        self._stepper = stepper
        self._enabled = enabled
        self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="beside-forward")
        self._record: Future[StepRecord] | None = None
        self._ahead: Future[Ahead] | None = None
        self._beside: Future[None] | None = None  # the helper's task

    def ahead(self) -> Ahead:
        """This step's mask and noise, made during the forward pass (on the first step, now)."""
        if self._ahead is None:  # the first step: nothing ran ahead of it
            return self._stepper.ahead()
        done, self._ahead = self._ahead, None
        return done.result()

    def hand_off(self, decided: Decided) -> StepRecord | None:
        """The step's record now; or None, when it is made beside the next forward pass
        (collect() hands it over) while the next mask is made or checked ahead."""
        stepper = self._stepper
        if not self._enabled or decided.finish is not None:
            return stepper.record(decided)
        self._record = Future()
        if stepper.draw is None:
            stepper.prepare_next()
            self._beside = self._helper.submit(_made, self._record, stepper.record, decided)
            return None
        self._ahead = Future()
        # One task, not three: each hand-over to the helper costs the step a wake-up.
        self._beside = self._helper.submit(self._beside_draw, decided, self._ahead, self._record)
        return None

    def _beside_draw(
        self, decided: Decided, ahead: Future[Ahead], record: Future[StepRecord]
    ) -> None:
        """On the helper: first what the next step waits for, then the record, then the
        noise of the step after."""
        stepper = self._stepper
        _made(ahead, stepper.ahead)
        _made(record, stepper.record, decided)
        assert stepper.draw is not None
        stepper.draw.make_next()

    def collect(self) -> StepRecord | None:
        """The record made beside the forward pass, if one was."""
        done, self._record = self._record, None
        return None if done is None else done.result()

    def close(self) -> None:
        """Wait for the helper: never free what it still works on."""
        for pending in (self._beside, self._record, self._ahead):
            if pending is not None:
                pending.exception()
        self._helper.shutdown(wait=True)


def _made(box: Future[T], work: Callable[..., T], *args: Any) -> None:
    """Run `work` on the helper, its result or exception into `box`."""
    try:
        box.set_result(work(*args))
    except BaseException as exc:  # handed to whoever waits on the box
        box.set_exception(exc)
