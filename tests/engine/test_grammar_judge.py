"""The grammar judge: llama.cpp's crashes and hangs on a grammar cost a child process, not us.

The fast tests use the process-wide judge, whose verdicts are kept in the user cache: a fresh
checkout pays one child start and one crash, later runs read the verdicts back. The slow ones
use a judge of their own, with an empty cache, to watch children start, die and restart.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from engine.errors import GrammarError, MaskscopeError
from engine.grammar.compile import CompiledSchema
from engine.grammar.judge import verdicts as judge
from engine.grammar.judge.verdicts import GrammarJudge, judge_gbnf
from engine.masking import make_backend

# 100,000 nested groups: llama.cpp 0.3.36's recursive-descent parser overflows an 8 MB stack
# (SIGSEGV) from about 15,000; the margin covers a larger stack limit.
DEEP = "root ::= " + "(" * 100_000 + '"a"' + ")" * 100_000 + "\n"
# 2,000 alternatives: llama.cpp keeps one stack per alternative and checks every token against
# each, so the first mask over the 262k vocabulary takes about 3 s on a 2-core machine.
SLOW = "root ::= " + " | ".join(f'"x{i}"' for i in range(2000)) + "\n"
SMALL_LIMIT_S = 0.3


def test_a_grammar_that_crashes_llama_cpp_is_a_grammar_error():
    with pytest.raises(GrammarError) as info:
        judge_gbnf(DEEP)
    message = str(info.value)
    assert "llama.cpp crashed on this grammar (SIGSEGV)" in message
    assert "llamacpp backend refuses it" in message and "llguidance backend may still" in message
    # Still here: the segfault happened in the judge's child.


def test_the_llamacpp_backend_refuses_a_crashing_grammar(model):
    compiled = CompiledSchema(schema={}, gbnf=DEEP, text="{}")
    with pytest.raises(GrammarError, match=r"SIGSEGV"):
        make_backend("llamacpp", model, compiled)


def test_a_verdict_is_judged_once():
    with pytest.raises(GrammarError):
        judge_gbnf(DEEP)
    starts = judge._judge.starts
    # A crash ends the child, so judging DEEP again would have to start another one.
    with pytest.raises(GrammarError, match="SIGSEGV"):
        judge_gbnf(DEEP)
    assert judge._judge.starts == starts
    # A new process (here a new judge) reads the verdict from the cache folder.
    fresh = GrammarJudge()
    assert fresh.verdict(DEEP).outcome == "crashed"
    assert fresh.starts == 0


def test_llama_cpp_parse_errors_keep_their_own_words():
    with pytest.raises(GrammarError) as info:
        judge_gbnf("root ::= value\n")
    assert str(info.value) == "llama.cpp rejected the grammar: Undefined rule identifier 'value'"
    assert "error parsing grammar" in info.value.detail


def test_a_verdict_holds_for_one_llama_cpp_build(tmp_path: Path):
    one, other = GrammarJudge(folder=tmp_path), GrammarJudge(folder=tmp_path)
    one._build, other._build = "one build", "another build"  # what fingerprint() hashes
    gbnf = 'root ::= "a"\n'
    one._write(one._key(gbnf), judge.GrammarVerdict("crashed", returncode=-signal.SIGSEGV))
    assert one.verdict(gbnf).outcome == "crashed" and one.starts == 0  # read back
    assert other._read(other._key(gbnf)) is None  # another build judges it afresh


def test_only_the_newest_verdicts_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(judge, "KEPT", 3)
    old = [tmp_path / f"{n}.json" for n in range(5)]
    for age, path in enumerate(old):
        path.write_text("{}")
        os.utime(path, (1000 + age, 1000 + age))
    own = GrammarJudge(folder=tmp_path)
    # Without a child: _write is where a new verdict goes, and where the folder is pruned.
    own._write("new", judge.GrammarVerdict("ok"))
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["2.json", "3.json", "4.json", "new.json"]


@pytest.mark.slow
def test_a_crashed_child_is_replaced(tmp_path: Path):
    own = GrammarJudge(folder=tmp_path)
    try:
        crashed = own.verdict(DEEP)
        assert (crashed.outcome, crashed.returncode) == ("crashed", -signal.SIGSEGV)
        assert own.verdict('root ::= "a"\n').outcome == "ok"
        assert own.starts == 2
        assert len(list(tmp_path.glob("*.json"))) == 2  # both written, no partial file left
    finally:
        own.stop()


@pytest.mark.slow
def test_a_grammar_past_the_time_limit_is_stopped(tmp_path: Path):
    own = GrammarJudge(limit_s=SMALL_LIMIT_S, folder=tmp_path)
    try:
        hung = own.verdict(SLOW)
        assert hung.outcome == "hung"
        assert f"did not finish this grammar within {SMALL_LIMIT_S:g} s" in str(hung.error())
        assert own.verdict('root ::= "a"\n').outcome == "ok"
        assert own.starts == 2  # the stopped child was replaced
        # A slow machine may finish it another day: that verdict is not written down.
        assert len(list(tmp_path.glob("*.json"))) == 1
    finally:
        own.stop()


def _outcome(gbnf: str) -> str:
    return judge.grammar_verdict(gbnf).outcome


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="no fork here")
def test_a_forked_worker_judges_with_a_child_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    own = GrammarJudge(folder=tmp_path)
    monkeypatch.setattr(judge, "_judge", own)
    try:
        judge_gbnf('root ::= "parent"\n')  # the parent's child runs when the worker forks
        # Forked while another thread judges: the worker's copy of the lock is held, by a
        # thread the worker does not have.
        with own._lock:
            pool = multiprocessing.get_context("fork").Pool(1)  # forks its worker now
        with pool:
            assert pool.apply_async(_outcome, ('root ::= "worker"\n',)).get(timeout=30) == "ok"
        assert own.starts == 1  # the worker's child was its own
    finally:
        own.stop()


@pytest.mark.slow
def test_stopping_does_not_wait_for_a_check_in_progress(tmp_path: Path):
    own = GrammarJudge(folder=tmp_path)  # the full limit: SLOW would finish in seconds
    outcome: list[BaseException | str] = []

    def judge_slow() -> None:
        try:
            outcome.append(own.verdict(SLOW).outcome)
        except MaskscopeError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=judge_slow)
    worker.start()
    deadline = time.monotonic() + 60
    while own._child is None and time.monotonic() < deadline:
        time.sleep(0.01)  # the child is ready and gets SLOW next
    started = time.monotonic()
    own.stop()  # as at exit, from another thread than the one judging
    worker.join(10)
    assert time.monotonic() - started < 2
    assert len(outcome) == 1 and "stopped before it finished" in str(outcome[0])
    assert not list(tmp_path.glob("*.json"))  # a check cut short is no verdict
