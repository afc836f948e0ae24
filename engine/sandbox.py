"""One call in a child process, with a time and a memory limit: for native code that can
abort the process or take all its memory on a schema a user typed.

outlines-core is the case: on 26 nested arrays its regex asked for gigabytes and the Rust
allocator aborted the process (no Python code can catch that), and an Index over Gemma's
vocabulary for a string of `maxLength` 1024 grew past 8 GB. Run in the window, either closed
it. Here such a call ends only its child, and the caller gets a GrammarError that says why.

The child ends with its caller: killed when `should_stop()` says so (nobody waits for the
answer any more), past its time limit, and, on Linux, by the kernel when the process that
started it dies (a check worker killed for hanging, a CLI interrupted), which would
otherwise leave a build running for minutes with no one to read it.

`python -m engine.sandbox MEMORY_BYTES PARENT_PID` reads a pickled (module, function, args)
on stdin and writes the pickled ("ok", value) or ("error", message) on stdout.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.errors import GrammarError, MaskscopeError

MEMORY_BYTES = 3 << 30
_POLL_S = 0.05


class Stopped(Exception):
    """The caller's should_stop() asked for the end; the child was killed."""


def run_isolated(
    module: str,
    function: str,
    args: tuple[Any, ...],
    *,
    what: str,
    limit_s: float,
    memory_bytes: int = MEMORY_BYTES,
    should_stop: Callable[[], bool] | None = None,
) -> Any:
    """`module.function(*args)` in a child process. Raises GrammarError naming `what` when
    the child fails, runs past `limit_s` or past `memory_bytes`, and re-raises a
    MaskscopeError the function raised as a GrammarError with its message."""
    root = str(Path(__file__).resolve().parents[1])
    paths = filter(None, (root, os.environ.get("PYTHONPATH")))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.sandbox", str(memory_bytes), str(os.getpid())],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    result: dict[str, bytes] = {}
    request = pickle.dumps((module, function, args))

    def talk_to_child() -> None:
        result["out"], result["err"] = proc.communicate(request)

    talk = threading.Thread(target=talk_to_child, name="sandbox", daemon=True)
    talk.start()
    deadline = time.monotonic() + limit_s
    while talk.is_alive():
        talk.join(_POLL_S)
        if should_stop is not None and should_stop():
            _kill(proc)
            raise Stopped(f"{what} was stopped")
        if time.monotonic() >= deadline:
            _kill(proc)
            raise GrammarError(f"{what} did not finish in {limit_s:g} s")
    out, err = result.get("out", b""), result.get("err", b"")
    return _answer(proc.returncode, out, err, what, memory_bytes)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    proc.wait()


def _answer(code: int, out: bytes, err: bytes, what: str, memory_bytes: int) -> Any:
    try:
        answer = pickle.loads(out) if code == 0 else None
    except Exception:
        answer = None
    if answer is None:
        last = (err.decode("utf-8", "replace").strip().splitlines() or [""])[-1]
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        if "memory allocation" in last or "MemoryError" in last:
            limit = f"{memory_bytes >> 20} MiB"
            raise GrammarError(f"{what} ran out of memory (its limit: {limit})", last)
        raise GrammarError(f"{what} crashed ({how})", last)
    if answer[0] == "error":
        raise GrammarError(answer[1])
    return answer[1]


def limit_memory(limit: int) -> None:
    """Cap the data segment (heap and private mappings): an allocation past it fails."""
    try:
        import resource
    except ImportError:  # not on Windows
        return
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def die_with_parent(parent: int) -> None:
    """Linux: the kernel sends this process SIGKILL when its parent ends (prctl(2),
    PR_SET_PDEATHSIG; strictly, when the thread that started it ends: run_isolated's caller,
    which waits for it); a parent already gone by now ends it here. Elsewhere nothing: the
    child then lives until its call returns."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _main() -> int:
    die_with_parent(int(sys.argv[2]))
    limit_memory(int(sys.argv[1]))
    module, function, args = pickle.loads(sys.stdin.buffer.read())
    try:
        value = getattr(importlib.import_module(module), function)(*args)
        answer: tuple[Any, ...] = ("ok", value)
    except MaskscopeError as exc:
        answer = ("error", exc.message)
    except MemoryError:
        print("MemoryError", file=sys.stderr)
        return 1
    sys.stdout.buffer.write(pickle.dumps(answer))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main())
