"""Pause, Step and Continue: a paused run resumes exactly where it stopped."""

from __future__ import annotations

import threading
import time

from engine.decode.loop import generate
from engine.decode.pacing import Pacer
from engine.records import RunResult, StepRecord
from engine.settings import GenerationSettings


def _drain(gen, pacer: Pacer, stop: threading.Event, out: list) -> None:
    while True:
        pacer.wait_turn(stop.is_set)
        try:
            out.append(next(gen))
        except StopIteration as done:
            out.append(done.value)
            return


def _wait_for(cond, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def _steps(run: list) -> list[tuple[int, float, tuple]]:
    return [(r.token_id, r.valid_mass, r.top_raw) for r in run if isinstance(r, StepRecord)]


def test_a_paused_and_resumed_run_equals_an_uninterrupted_one(model, currency):
    ex, compiled = currency
    settings = GenerationSettings(seed=3, temperature=1.0, max_tokens=24)
    plain: list = list(_collect(generate(model, compiled, ex.prompt, settings)))

    pacer, stop, run = Pacer(), threading.Event(), []
    pacer.pause()
    worker = threading.Thread(
        target=_drain, args=(generate(model, compiled, ex.prompt, settings), pacer, stop, run)
    )
    worker.start()
    try:
        time.sleep(0.2)
        assert run == []  # paused before the first step: nothing decoded
        for n in (1, 2, 3):
            pacer.step()
            _wait_for(lambda n=n: len(run) == n)
        time.sleep(0.2)
        assert len(run) == 3  # Step runs one token, then the run waits again
        pacer.resume()
        worker.join(60)
    finally:
        stop.set()
        worker.join()
    assert isinstance(run[-1], RunResult) and isinstance(plain[-1], RunResult)
    assert _steps(run) == _steps(plain)
    assert run[-1].text == plain[-1].text


def test_stop_wakes_a_paused_run():
    pacer, stop = Pacer(), threading.Event()
    pacer.pause()
    threading.Timer(0.1, stop.set).start()
    start = time.monotonic()
    pacer.wait_turn(stop.is_set)
    assert time.monotonic() - start < 2.0


def test_the_delay_holds_each_step_but_not_a_step_while_paused():
    pacer, stop = Pacer(), threading.Event()
    pacer.set_delay(0.3)
    start = time.monotonic()
    pacer.wait_turn(stop.is_set)
    assert time.monotonic() - start >= 0.29
    pacer.pause()
    threading.Timer(0.05, pacer.step).start()
    start = time.monotonic()
    pacer.wait_turn(stop.is_set)  # a Step while paused runs at once, not after the delay
    assert time.monotonic() - start < 0.25


def _collect(gen):
    while True:
        try:
            yield next(gen)
        except StopIteration as done:
            yield done.value
            return
