"""llama.cpp's verdict on a GBNF text, from a child process, so that a native crash costs nothing.

llama.cpp's grammar code has segfaulted on real schemas (deep recursion in its parser, huge
bounded repeats, some `\\w` patterns), and a crash in-process kills the window. So a persistent
child (engine/grammar/judge/child.py) parses each new grammar, builds its sampler on the default
model's vocabulary and applies the first mask. A child that dies or runs past the time limit is
the verdict, and a fresh child takes the next grammar. Verdicts are kept by hash of the grammar
and the llama.cpp build, in memory and under the user cache folder, so each grammar is judged
once per build.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

import engine
from engine.errors import GrammarError, MaskscopeError
from engine.llama_build.verdict import fingerprint
from engine.model.paths import cache_dir, vocabulary_model_path

# For one grammar. Real ones (MaskBench dev, the JSON Schema Test Suite) took 0.05 s on 2 idle
# cores, 0.12 s median and 1.7 s at most on busy ones; 2,000 top-level alternatives, 3.5 s.
LIMIT_S = 20.0
START_LIMIT_S = 120.0  # the first start may assemble the default model from its package
_VERSION = "2"  # in the key: a judge that checks differently does not reuse old verdicts
_FOLDER = "grammar-verdicts"
# Each edit of a schema in the window can make a new grammar: the newest verdicts are kept.
KEPT = 20_000  # about 80 MB of 4 KB blocks at most
_REFUSED = "the llamacpp backend refuses it; the llguidance backend may still run it"


@dataclass(frozen=True)
class GrammarVerdict:
    """How llama.cpp took a grammar: facts only, so a cached verdict reads in today's words.

    outcome: "ok"; "rejected" (llama.cpp said why: `message`, `detail`); "crashed" (the child
    ended with `returncode`, negative for a signal); "hung" (stopped after `limit_s`).
    """

    outcome: str
    message: str = ""
    detail: str = ""
    returncode: int | None = None
    limit_s: float | None = None

    def error(self) -> GrammarError | None:
        if self.outcome == "rejected":
            message = self.message  # the child's finished message, as it was
        elif self.outcome == "crashed":
            how = f"crashed on this grammar ({_signal_name(self.returncode)})"
            message = f"llama.cpp {how} in a check process: {_REFUSED}"
        elif self.outcome == "hung":
            how = f"did not finish this grammar within {self.limit_s:g} s"
            message = f"llama.cpp {how} in a check process: {_REFUSED}"
        else:
            return None
        # Set apart, not passed in: the constructor would append the detail's first line.
        error = GrammarError(message)
        error.detail = self.detail
        return error


def _signal_name(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class _Child:
    """One judge_child process, its answers read by a thread so that a wait can time out."""

    def __init__(self) -> None:
        # Open as long as this object lives: the child's last words after a crash.
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.stopped = False  # by stop(): an unanswered grammar is then no verdict
        env = dict(os.environ)
        root = str(Path(engine.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        model = vocabulary_model_path()  # a ModelLoadError here says what the machine lacks
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.grammar.judge.child", str(model)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            text=True,
            encoding="utf-8",
        )
        self._answers: queue.Queue[dict | None] = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stdout: IO[str]) -> None:
        try:
            for line in stdout:
                self._answers.put(json.loads(line))
        except ValueError:
            self.proc.kill()  # not an answer: nothing it says can be trusted now
        self._answers.put(None)  # end of output: the child has ended

    def wait_ready(self) -> None:
        try:
            answer = self._answers.get(timeout=START_LIMIT_S)
        except queue.Empty:
            answer = {"error": f"it did not start within {START_LIMIT_S:g} s"}
        if answer is None or not answer.get("ready"):
            self.stop()
            why = answer.get("error") if answer else self.last_words() or "no reason given"
            raise MaskscopeError(f"the grammar check process could not start: {why}")

    def ask(self, gbnf: str, limit_s: float) -> GrammarVerdict:
        try:
            self.proc.stdin.write(json.dumps({"gbnf": gbnf}) + "\n")
            self.proc.stdin.flush()
            answer = self._answers.get(timeout=limit_s)
        except queue.Empty:
            self.stop()
            return GrammarVerdict("hung", limit_s=limit_s)
        except OSError:  # it died while reading the grammar
            answer = None
        if answer is not None:
            return GrammarVerdict("ok") if answer["ok"] else _rejection(answer)
        returncode = self.proc.wait()
        if self.stopped:  # by another thread: Maskscope is quitting
            raise MaskscopeError("the grammar check was stopped before it finished")
        if 0 < returncode < 128:  # Python failed (a bug here), llama.cpp did not crash
            raise MaskscopeError(f"the grammar check failed: {self.last_words() or returncode}")
        return GrammarVerdict("crashed", detail=self.last_words(), returncode=returncode)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def last_words(self) -> str:
        self._stderr.seek(0)
        text = self._stderr.read().decode("utf-8", errors="replace")
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return lines[-1] if lines else ""

    def stop(self) -> None:
        self.stopped = True
        if self.alive():
            self.proc.kill()
        self.proc.wait()
        with contextlib.suppress(OSError):  # unsent bytes to a dead child
            self.proc.stdin.close()


def _rejection(answer: dict) -> GrammarVerdict:
    return GrammarVerdict("rejected", message=answer["message"], detail=answer["detail"])


class GrammarJudge:
    """Judges grammars in one child process at a time, started when first needed.

    Thread-safe: one lock covers the caches and the child. `starts` counts child starts.
    """

    def __init__(self, limit_s: float = LIMIT_S, folder: Path | None = None) -> None:
        self.limit_s = limit_s
        self._folder = folder
        self._lock = threading.Lock()
        self._child: _Child | None = None
        self._known: dict[str, GrammarVerdict] = {}
        self._build: str | None = None
        self.starts = 0
        self._pruned = False

    def verdict(self, gbnf: str) -> GrammarVerdict:
        with self._lock:
            key = self._key(gbnf)
            found = self._known.get(key) or self._read(key)
            if found is None:
                found = self._ask(gbnf)
                # A grammar that ran out of time may finish on a less busy machine: that
                # verdict lasts only as long as this process.
                if found.outcome != "hung":
                    self._write(key, found)
            self._known[key] = found
            return found

    def forget_child(self) -> None:
        """Drop the child without stopping it: after a fork it belongs to the parent."""
        self._lock = threading.Lock()
        self._child = None

    def stop(self) -> None:
        """Stop the child now. Without the lock: quitting must not wait for a check."""
        child, self._child = self._child, None
        if child is not None:
            child.stop()
        atexit.unregister(self.stop)

    def _ask(self, gbnf: str) -> GrammarVerdict:
        child = self._child
        if child is not None and not child.alive():
            child.stop()  # it died between grammars: not this grammar's doing
            child = None
        if child is None:
            self.starts += 1
            child = _Child()
            child.wait_ready()
            atexit.register(self.stop)
        self._child = child
        found = child.ask(gbnf, self.limit_s)
        if not child.alive():
            child.stop()
            if self._child is child:
                self._child = None
        return found

    def _key(self, gbnf: str) -> str:
        if self._build is None:
            self._build = fingerprint()  # hashes the libraries: once per process
        text = "\0".join([_VERSION, self._build, gbnf])
        return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()

    def _path(self, key: str) -> Path:
        return (self._folder or cache_dir() / _FOLDER) / f"{key}.json"

    def _read(self, key: str) -> GrammarVerdict | None:
        try:
            return GrammarVerdict(**json.loads(self._path(key).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None  # not judged yet, or written by another version of this module

    def _write(self, key: str, found: GrammarVerdict) -> None:
        path = self._path(key)
        if not self._pruned:
            self._pruned = True
            _prune(path.parent, KEPT)
        partial = path.with_name(f"{key}.{os.getpid()}.{threading.get_ident()}.partial")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Written aside, then renamed into place: another process never reads half of it.
            partial.write_text(json.dumps(asdict(found)), encoding="utf-8")
            os.replace(partial, path)
        except OSError:
            # A read-only or full cache: the verdict still holds for this process.
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)


def _prune(folder: Path, kept: int) -> None:
    """Once per process: delete all but the `kept` most recently written verdicts."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    if len(entries) <= kept:
        return
    for entry in sorted(entries, key=_written)[: len(entries) - kept]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


def _written(entry: os.DirEntry) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0  # pruned by another process meanwhile


_judge = GrammarJudge()
if hasattr(os, "register_at_fork"):
    # A forked worker (multiprocessing on Linux) gets the parent's child, which it cannot talk
    # to (the reader thread stayed behind), and its lock, maybe held by a thread that stayed
    # behind too: it starts afresh.
    os.register_at_fork(after_in_child=lambda: _judge.forget_child())


def grammar_verdict(gbnf: str) -> GrammarVerdict:
    return _judge.verdict(gbnf)


def judge_gbnf(gbnf: str) -> None:
    """Raise GrammarError unless llama.cpp parses the grammar and masks with it, uncrashed."""
    error = grammar_verdict(gbnf).error()
    if error is not None:
        raise error


def check_parses(gbnf: str) -> None:
    """Raise GrammarError when llama.cpp's parser rejects the grammar, with its own message.

    A grammar that crashes llama.cpp passes here: the llguidance backend can still run it, and
    the llamacpp backend refuses it (judge_gbnf) from the same cached verdict.
    """
    found = grammar_verdict(gbnf)
    if found.outcome == "rejected":
        raise found.error()
