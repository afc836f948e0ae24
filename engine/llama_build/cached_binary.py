"""What the native commands Maskscope compiles from llama-cpp-python's sdist share
(llama-server, engine/llama_build/server.py; llama.cpp's JSON-Schema converter,
converter.py): a binary in the cache is used only once it has been proven to work on this
machine, is compiled again when it fails, and a fresh build that fails its proof is an
error and leaves nothing behind. Machines differ between sessions (another CPU's build may
not run here), so nothing cached is trusted untried."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from engine.errors import MaskscopeError


def install(built: Path, target: Path) -> Path:
    """Copy a binary built in a temporary folder to `target`, atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial")
    shutil.copy2(built, partial)
    os.replace(partial, target)
    return target


def ensure(
    cached: Path | None,
    failure: Callable[[Path], str | None],
    build: Callable[[], Path],
    error: type[MaskscopeError],
) -> Path:
    """`cached` if it passes `failure` (None: it works); else `build()`, proven the same way.
    A cached binary that fails is removed before the build; a built one that fails too is
    removed and raised as `error`."""
    if cached is not None:
        why = failure(cached)
        if why is None:
            return cached
        print(f">> {why}: compiling it again", flush=True)
        cached.unlink(missing_ok=True)
    built = build()
    why = failure(built)
    if why is not None:
        built.unlink(missing_ok=True)  # never leave a binary that fails in the cache
        raise error(why)
    return built


def main(
    parser: argparse.ArgumentParser,
    make: Callable[[argparse.Namespace], Path],
    label: str,
    argv: list[str] | None,
) -> int:
    """A build command's CLI: `--rebuild` beside the parser's own options; exit 1 with one
    line on stderr when the build fails."""
    parser.add_argument("--rebuild", action="store_true", help="compile again, ignoring the cache")
    args = parser.parse_args(argv)
    try:
        binary = make(args)
    except MaskscopeError as e:
        print(f"maskscope: {e}", file=sys.stderr)
        return 1
    print(f">> {label}: {binary}")
    return 0
