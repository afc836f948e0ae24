"""A bug in a slot: the traceback in a log file, its path in the window's banner; and a bug in
the worker says the same (tests/engine/test_cli_deep_and_internal.py covers the CLI)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.shell import bug_report


class _Window:
    def __init__(self) -> None:
        self.reports: list[tuple[str, str]] = []

    def report_problem(self, title: str, message: str) -> None:
        self.reports.append((title, message))


@pytest.fixture
def state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # put back after the test
    return tmp_path / "state"


def _raise_in_a_slot() -> BaseException:
    try:
        {}["missing"]
    except KeyError as exc:
        return exc
    raise AssertionError("unreachable")


def test_an_uncaught_exception_is_logged_and_named_in_the_banner(state_home, capsys):
    window = _Window()
    bug_report.install(window)
    exc = _raise_in_a_slot()
    sys.excepthook(type(exc), exc, exc.__traceback__)
    [(title, message)] = window.reports
    assert title == "Internal error"
    assert message.startswith("KeyError: 'missing'. A bug in Maskscope, not your input")
    logged = Path(message.rsplit("the traceback is in ", 1)[1])
    assert logged.is_relative_to(state_home)
    assert "_raise_in_a_slot" in logged.read_text(encoding="utf-8")
    assert capsys.readouterr().err.count("\n") == 1


def test_an_interrupt_is_not_a_bug(state_home):
    window = _Window()
    seen = []
    sys.excepthook = lambda *args: seen.append(args[0])
    bug_report.install(window)
    sys.excepthook(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert seen == [KeyboardInterrupt] and window.reports == []
    assert not state_home.exists()
