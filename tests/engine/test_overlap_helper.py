"""The helper thread beside the forward pass (engine/decode/overlap.py): tasks run in the
order given, answers come back in that order, and an error is raised where it is read."""

from __future__ import annotations

import threading

import pytest

from engine.decode.overlap import _Helper


def test_tasks_run_in_order_and_answer_in_order() -> None:
    helper = _Helper()
    ran: list[str] = []
    try:
        helper.submit(lambda: ran.append("a") or "first")
        helper.submit(lambda: ran.append("quiet"), answers=False)
        helper.submit(lambda: ran.append("b") or "second")
        assert helper.answer() == "first"
        assert helper.answer() == "second"
    finally:
        helper.shutdown()
    assert ran == ["a", "quiet", "b"]


def test_a_tasks_error_is_raised_where_its_answer_is_read() -> None:
    helper = _Helper()
    try:
        helper.submit(lambda: 1 / 0)
        helper.submit(lambda: "after")
        with pytest.raises(ZeroDivisionError):
            helper.answer()
        assert helper.answer() == "after"  # the helper lives on
    finally:
        helper.shutdown()


def test_shutdown_waits_for_the_tasks_given() -> None:
    helper = _Helper()
    release, done = threading.Event(), []
    helper.submit(lambda: release.wait(5) and done.append(True), answers=False)
    release.set()
    helper.shutdown()
    assert done == [True]


def test_no_thread_until_a_task_is_given() -> None:
    before = {t.name for t in threading.enumerate()}
    helper = _Helper()
    assert "beside-forward" not in {t.name for t in threading.enumerate()} - before
    helper.shutdown()  # nothing started: nothing to wait for
