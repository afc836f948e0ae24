"""A failed autosave leaves nothing behind (issue 22: a full disk left `.partial` files in the
data folder, one per failed tick); the old autosave stays whole and the next tick writes."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from app.shell.autosave import AUTOSAVE_NAME, Autosave, WorkState, read_state


def test_a_failed_autosave_leaves_no_partial_file(qtbot, tmp_path: Path, monkeypatch) -> None:
    state = WorkState(schema="{}", prompt="p")
    autosave = Autosave(tmp_path, lambda: WorkState(state.schema, state.prompt))
    assert autosave.save_if_changed()
    before = (tmp_path / AUTOSAVE_NAME).read_bytes()
    real_replace = os.replace

    def disk_full(src, dst) -> None:  # the text went out, the rename did not
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", disk_full)
    state.schema = '{"type": "string"}'
    assert not autosave.save_if_changed()
    autosave.mark_clean()  # fails the same way, as quietly
    monkeypatch.setattr(os, "replace", real_replace)
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "session.lock")
    assert left == [AUTOSAVE_NAME]
    assert (tmp_path / AUTOSAVE_NAME).read_bytes() == before
    assert read_state(tmp_path / AUTOSAVE_NAME)[0].schema == "{}"
