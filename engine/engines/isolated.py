"""Compiles that run in a child process, each with a time and a memory limit.

llguidance, outlines-core and XGrammar compile in native code, in the calling process when
a run uses them. For the engines report every one of them sees every schema the user lints,
so each runs in a child (engine/engines/compile_child.py): outlines-core asks for gigabytes
on 63 levels of nested arrays, and a native abort or an exhausted memory then ends only the
child, whose last words become the cell's message. The children start together, so their
start-up (about a second of imports each) overlaps.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import engine
from engine.grammar.report import Unenforced

LIMIT_S = 60.0  # a compile plus its imports (XGrammar's bring torch) on busy cores
MEMORY_BYTES = 3 << 30  # the child's data segment; a real schema's grammar needs far less


@dataclass(frozen=True, slots=True)
class ChildResult:
    compiles: bool
    message: str | None
    unenforced: tuple[Unenforced, ...]


class Pending:
    """A compile under way in its child; `result()` waits for it, within the limit."""

    def __init__(self, text: str, compiler: str, engine_name: str, limit_s: float) -> None:
        self.engine_name = engine_name
        self.limit_s = limit_s
        env = dict(os.environ)
        root = str(Path(engine.__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.text = text
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.engines.compile_child", compiler, str(MEMORY_BYTES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            encoding="utf-8",
            errors="replace",
        )

    def result(self) -> ChildResult:
        try:
            out, err = self.proc.communicate(self.text, timeout=self.limit_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            why = f"did not finish within {self.limit_s:g} s"
            return ChildResult(False, f"{self.engine_name} {why} in a check process", ())
        answer = _answer(out) if self.proc.returncode == 0 else None
        if answer is None:
            return ChildResult(False, self._crash(err), ())
        gaps = tuple(Unenforced(*gap) for gap in answer.get("unenforced", ()))
        return ChildResult(bool(answer["compiles"]), answer.get("message"), gaps)

    def _crash(self, err: str) -> str:
        code = self.proc.returncode
        how = f"exit status {code}"
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                how = signal.Signals(-code).name
        last = next((ln.strip() for ln in reversed(err.splitlines()) if ln.strip()), "")
        said = f": {last}" if last else ""
        return f"{self.engine_name} crashed on this schema in a check process ({how}){said}"


def start(text: str, compiler: str, engine_name: str, limit_s: float = LIMIT_S) -> Pending:
    return Pending(text, compiler, engine_name, limit_s)


def _answer(out: str) -> dict | None:
    lines = out.strip().splitlines()
    try:
        answer = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and "compiles" in answer else None
