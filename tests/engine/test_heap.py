"""Objects that live as long as a model stay out of the collections a run makes."""

from __future__ import annotations

import gc
import weakref

from engine import heap


class _Node:
    """A cycle of one: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_settle_frees_what_died_and_freezes_what_lives() -> None:
    died = _Node()
    gone = weakref.ref(died)
    heap.settle()  # `died` is frozen while still referenced
    del died
    lives = _Node()
    heap.settle()  # the next load: the frozen are collected too
    assert gone() is None
    assert not any(o is lives for o in gc.get_objects())  # a collection no longer walks it
    assert gc.get_freeze_count() > 0


def test_settle_after_load_runs_once_per_model() -> None:
    model = _Node()
    heap.settle_after_load(model)
    walked = _Node()  # made after the model's settle
    heap.settle_after_load(model)  # already settled: nothing is collected or frozen
    assert any(o is walked for o in gc.get_objects())
