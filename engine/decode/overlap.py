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

from concurrent.futures import Future, ThreadPoolExecutor

from engine.decode.stepper import Ahead, Decided, Stepper
from engine.records import StepRecord


class Overlap:
    """When a step's record and the next mask are made: now, or beside the forward pass."""

    def __init__(self, stepper: Stepper, enabled: bool) -> None:
        self._stepper = stepper
        self._enabled = enabled
        self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="beside-forward")
        # The helper's task for the step: the next step's mask and noise (or what stopped
        # it), and this step's record.
        self._beside: Future[tuple[Ahead | BaseException | None, StepRecord]] | None = None
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
        self._beside = self._helper.submit(self._beside_forward, decided)
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
            self._helper.submit(stepper.draw.make_next)
        return ahead, stepper.record(decided)

    def collect(self) -> StepRecord | None:
        """The record made beside the forward pass, if one was."""
        done, self._beside = self._beside, None
        if done is None:
            return None
        self._ahead, record = done.result()
        return record

    def close(self) -> None:
        """Wait for the helper: never free what it still works on."""
        if self._beside is not None:
            self._beside.exception()
        self._helper.shutdown(wait=True)
