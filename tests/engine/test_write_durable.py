"""write_atomically reaches the disk (issue 22): the new file is fsynced before it is renamed
over the old one, and the folder after, so a power cut soon after a save cannot leave the
name pointing at an empty file. Where the OS refuses to sync a folder, the save still
succeeds."""

from __future__ import annotations

import os
import stat

from engine.runs.saved import write_atomically


def _record(monkeypatch) -> list[str]:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync file")
        real_fsync(fd)

    def replace(src, dst) -> None:
        events.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return events


def test_the_file_is_synced_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    events = _record(monkeypatch)
    write_atomically(tmp_path / "x.json", "new text\n")
    assert events == ["fsync file", "rename", "fsync folder"]
    assert (tmp_path / "x.json").read_text(encoding="utf-8") == "new text\n"


def test_a_folder_that_cannot_be_synced_does_not_fail_the_save(tmp_path, monkeypatch):
    real_fsync = os.fsync

    def no_folder_sync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(22, "Invalid argument")  # what some file systems answer
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", no_folder_sync)
    write_atomically(tmp_path / "x.json", b"bytes\n")
    assert (tmp_path / "x.json").read_bytes() == b"bytes\n"
