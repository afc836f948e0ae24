"""A full or unwritable disk while saving a run, a report or a suite's outputs: one clear
line, exit 2 on the command line, and the old file never truncated (tests/disk_faults.py
says how each fault is made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.main import main
from engine.errors import MaskscopeError
from engine.runs.saved import load_run, save_run, write_atomically
from tests.disk_faults import assert_old_file_whole, fill_the_disk, old_file, read_only_path

RUN = Path(__file__).parents[1] / "data" / "runs" / "currency-v2.json"


def test_write_atomically_keeps_the_old_file_when_the_disk_fills(tmp_path, monkeypatch):
    target = old_file(tmp_path, "x.json")
    fill_the_disk(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, "new text " * 1000)
    assert_old_file_whole(target)


def test_a_run_saved_to_a_full_disk(tmp_path, monkeypatch):
    run = load_run(RUN)
    target = old_file(tmp_path, "run.json")
    fill_the_disk(monkeypatch)
    with pytest.raises(MaskscopeError, match=r"cannot write run file .*: No space left"):
        save_run(target, run)
    assert_old_file_whole(target)


def test_a_run_saved_where_nothing_can_be_written(tmp_path):
    with pytest.raises(MaskscopeError, match=r"cannot write run file .*: Not a directory"):
        save_run(read_only_path(tmp_path, "run.json"), load_run(RUN))


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_the_report_command(tmp_path, monkeypatch, capsys, fault):
    if fault == "full":
        out = old_file(tmp_path, "report.html")
        fill_the_disk(monkeypatch)
        reason = "No space left on device"
    else:
        out = read_only_path(tmp_path, "report.html")
        reason = "Not a directory"
    assert main(["report", str(RUN), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"maskscope: cannot write report {out}: {reason}\n"
    if fault == "full":
        assert_old_file_whole(out)


def test_the_test_commands_outputs(tmp_path, monkeypatch):
    """`maskscope test` writes its JUnit, JSON and bundle files through this one helper."""
    from engine.cli.suite import _write

    out = old_file(tmp_path, "junit.xml")
    fill_the_disk(monkeypatch)
    with pytest.raises(MaskscopeError, match=r"cannot write .*: No space left"):
        _write(str(out), "<testsuites/>" * 100)
    assert_old_file_whole(out)
