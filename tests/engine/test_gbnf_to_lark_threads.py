"""gbnf_to_lark raises the recursion limit and the new threads' stack size, both
process-wide; two translations at once must neither lower the limit under each other nor
leave it raised (issue 22: each saved the other's raised limit as the one to restore)."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from engine.masking import llguidance as llg

GBNF = 'root ::= "{" ws "}"\nws ::= [ ]*\n'


def test_two_translations_at_once_leave_the_recursion_limit_as_it_was(monkeypatch):
    before = sys.getrecursionlimit()
    first_in, release = threading.Event(), threading.Event()
    seen: list[int] = []
    calls = iter(range(2))
    real = llg._llg_gbnf_to_lark

    def slow(gbnf: str) -> str:
        """The real translation, held long enough for the other thread to come in."""
        seen.append(sys.getrecursionlimit())
        if next(calls) == 0:
            first_in.set()
            release.wait(5)
        else:
            time.sleep(0.3)
        seen.append(sys.getrecursionlimit())
        return real(gbnf)

    monkeypatch.setattr(llg, "_llg_gbnf_to_lark", slow)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(llg.gbnf_to_lark(GBNF)))
               for _ in range(2)]  # fmt: skip
    threads[0].start()
    assert first_in.wait(5)
    threads[1].start()
    time.sleep(0.1)  # the second is inside now, or waiting for the first
    release.set()
    for t in threads:
        t.join(10)
    assert len(results) == 2 and results[0] == results[1]
    assert all(limit >= llg._DEEP_RECURSION for limit in seen)  # never lowered under one
    assert sys.getrecursionlimit() == before  # nor left raised


def test_a_translation_that_fails_restores_the_limit_too():
    before = sys.getrecursionlimit()
    with pytest.raises(llg.GrammarError):
        llg.gbnf_to_lark("root ::= undefined-rule\n")
    assert sys.getrecursionlimit() == before
