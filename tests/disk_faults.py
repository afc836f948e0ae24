"""A full disk, for the save tests: no real one can be made here (no tmpfs mount without
privileges, and /dev/full takes no temporary file beside it), so os.fdopen's files write
the first half of the text and then fail with ENOSPC, as a disk that fills mid-save does.
A read-only place is real: a path under a regular file fails with ENOTDIR (chmod cannot
stop root, who runs the tests)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

OLD = "the old file, whole\n"


class _FillsUp:
    def __init__(self, f: Any) -> None:
        self._f = f

    def write(self, text: str) -> int:
        self._f.write(text[: len(text) // 2])
        self._f.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __enter__(self) -> _FillsUp:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()


def fill_the_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FillsUp(real(*a, **k)))


def old_file(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text(OLD, encoding="utf-8")
    return path


def assert_old_file_whole(path: Path) -> None:
    assert path.read_text(encoding="utf-8") == OLD
    assert not [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # none left


def read_only_path(folder: Path, name: str) -> Path:
    blocker = folder / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    return blocker / name
