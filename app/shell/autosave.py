"""Autosave and crash restore of the working state: schema, prompt, settings and layout.

Every few seconds, when anything changed, the state goes to `autosave.json` in the data
folder, marked dirty; a clean quit marks it clean. A start that finds it dirty was
preceded by a crash (or a kill): the file is kept as `recovered.json` until the user
restores or discards it, while this session autosaves anew. A crash while an earlier one
is still unanswered keeps both (`recovered-2.json`, ...): each is offered in turn. A lock
file tells a crash from a second window that is still running: only the window holding the
lock autosaves.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QLockFile, QObject, QTimer

AUTOSAVE_MS = 3000
AUTOSAVE_NAME, RECOVERED_NAME, LOCK_NAME = "autosave.json", "recovered.json", "session.lock"
FORMAT = 1


@dataclass(slots=True)
class WorkState:
    """What the window is working on. `settings` is GenerationSettings as a dict, `layout`
    the panes' and window's saved states in base64, `suite` the Suite pane's unsaved suite
    (SuiteEditor.snapshot), None when it has no unsaved edits."""

    schema: str
    prompt: str
    path: str | None = None
    example: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    layout: dict[str, str] = field(default_factory=dict)
    saved_at: float = 0.0  # time.time() of the write
    suite: dict[str, Any] | None = None

    def to_json(self, clean: bool) -> str:
        return json.dumps({"format": FORMAT, "clean": clean, **self._fields()}, indent=1)

    def _fields(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "prompt": self.prompt,
            "path": self.path,
            "example": self.example,
            "settings": self.settings,
            "layout": self.layout,
            "saved_at": self.saved_at,
            "suite": self.suite,
        }

    def same_work(self, other: WorkState | None) -> bool:
        """Equal apart from when it was written."""
        if other is None:
            return False
        return {**self._fields(), "saved_at": 0} == {**other._fields(), "saved_at": 0}


def read_state(path: Path) -> tuple[WorkState, bool] | None:
    """(state, clean) from an autosave file; None when missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        state = WorkState(
            schema=str(data["schema"]),
            prompt=str(data["prompt"]),
            path=data.get("path") or None,
            example=data.get("example") or None,
            settings=dict(data.get("settings") or {}),
            layout={str(k): str(v) for k, v in (data.get("layout") or {}).items()},
            saved_at=float(data.get("saved_at") or 0.0),
            suite=data["suite"] if isinstance(data.get("suite"), dict) else None,
        )
        return state, bool(data.get("clean"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def recovered_files(folder: Path) -> list[Path]:
    """The kept crashed states, oldest first: recovered.json, recovered-2.json, ..."""

    def number(path: Path) -> int:
        tail = path.stem.removeprefix(Path(RECOVERED_NAME).stem).removeprefix("-")
        return int(tail) if tail.isdigit() else 1

    found = [
        p
        for p in folder.glob(f"{Path(RECOVERED_NAME).stem}*.json")
        if p.name == RECOVERED_NAME or p.stem.rpartition("-")[2].isdigit()
    ]
    return sorted(found, key=number)


def free_recovered_path(folder: Path) -> Path:
    """recovered.json, or the first free recovered-N.json: an unanswered one is kept."""
    path, n = folder / RECOVERED_NAME, 1
    while path.exists():
        n += 1
        path = folder / f"{Path(RECOVERED_NAME).stem}-{n}.json"
    return path


def _write(path: Path, text: str) -> None:
    """Write through a temporary file, so that a kill mid-write leaves the old file; one
    that fails (a full disk) is removed, not left in the data folder at every tick."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


class Autosave(QObject):
    """Calls `snapshot()` every AUTOSAVE_MS and writes its state when it changed."""

    def __init__(
        self,
        folder: Path,
        snapshot: Callable[[], WorkState],
        parent: QObject | None = None,
        interval_ms: int = AUTOSAVE_MS,
    ) -> None:
        super().__init__(parent)
        self.folder = folder
        self._snapshot = snapshot
        self._last: WorkState | None = None
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = QLockFile(str(folder / LOCK_NAME))
        self._lock.setStaleLockTime(0)  # stale only when its process is gone, never by age
        self.active = self._lock.tryLock(0)  # False: another window is running
        # (file, state) of each crashed session not answered for yet, oldest first.
        self.pending: list[tuple[Path, WorkState]] = self._take_crashed() if self.active else []
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.save_if_changed)
        if self.active:
            self._timer.start()

    @property
    def autosave_path(self) -> Path:
        return self.folder / AUTOSAVE_NAME

    @property
    def recovered(self) -> WorkState | None:
        """The crashed state offered now: the oldest one not answered for."""
        return self.pending[0][1] if self.pending else None

    def _take_crashed(self) -> list[tuple[Path, WorkState]]:
        """The states crashed sessions left, kept aside as recovered*.json, the last one's
        included; never over one that nobody answered for yet."""
        found = read_state(self.autosave_path)
        if found is not None and not found[1]:
            os.replace(self.autosave_path, free_recovered_path(self.folder))
        kept = ((path, read_state(path)) for path in recovered_files(self.folder))
        return [(path, state[0]) for path, state in kept if state is not None]

    def save_if_changed(self) -> bool:
        if not self.active:
            return False
        state = self._snapshot()
        if state.same_work(self._last):
            return False
        state.saved_at = time.time()
        try:
            _write(self.autosave_path, state.to_json(clean=False))
        except OSError:
            return False  # a full disk must not stop the window; the next tick tries again
        self._last = state
        return True

    def mark_clean(self) -> None:
        """A clean quit: the autosave is written once more, as clean, and the lock freed."""
        if not self.active:
            return
        self._timer.stop()
        state = self._snapshot()
        state.saved_at = time.time()
        with contextlib.suppress(OSError):  # nothing to be done about it while quitting
            _write(self.autosave_path, state.to_json(clean=True))
        self._lock.unlock()
        self.active = False

    def forget_recovered(self) -> None:
        """The user restored or discarded the state offered: it is not offered again; the
        next one kept, if any, is offered now."""
        if self.pending:
            path, _state = self.pending.pop(0)
            path.unlink(missing_ok=True)
