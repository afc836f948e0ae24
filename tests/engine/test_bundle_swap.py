"""A bundle is written into a new folder beside its target and swapped in whole (issue 22:
the old files were deleted before the new ones were written, so a failure midway left a
folder that the next export refused)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from engine.records import FinishReason, RunResult
from engine.suite.bundle import export as bundling  # its names tested_of and Tested look like tests
from engine.suite.load import suite_from_json
from engine.suite.metrics import sample_from_run
from engine.suite.run import SuiteRun
from tests.disk_faults import fill_the_disk
from tests.engine.test_bundle import SUITE


def _tested(model, tmp_path: Path, description: str) -> bundling.Tested:
    suite = dataclasses.replace(suite_from_json(SUITE, tmp_path), description=description)
    result = RunResult('{"ok": true}', FinishReason.END_OF_GENERATION, 5)
    sample = sample_from_run("good", 0, 0, result, (), expectations=())
    return bundling.tested_of(model, suite, SuiteRun((sample,), (), False, 0, 1.0, planned=1))


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file()}  # fmt: skip


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.fixture
def old_bundle(model, tmp_path) -> tuple[Path, dict[str, bytes]]:
    out = tmp_path / "out"
    bundling.write_bundle(out, _tested(model, tmp_path, "the old bundle"))
    return out, _snapshot(out)


def test_a_failure_midway_leaves_the_old_bundle_whole(model, tmp_path, old_bundle, monkeypatch):
    out, before = old_bundle
    real = bundling._write
    written: list[Path] = []

    def fails_at_the_fourth(path: Path, text: str) -> None:
        if len(written) == 3:
            raise bundling.BundleError(f"cannot write {path}: No space left on device")
        written.append(path)
        real(path, text)

    monkeypatch.setattr(bundling, "_write", fails_at_the_fourth)
    with pytest.raises(bundling.BundleError, match="No space left"):
        bundling.write_bundle(out, _tested(model, tmp_path, "the new bundle"))
    assert _snapshot(out) == before
    assert _leftovers(out) == []  # the half-written folder is gone
    bundling.previous_bundle(out)  # and the next export takes the folder


def test_a_full_disk_leaves_the_old_bundle_whole(model, tmp_path, old_bundle, monkeypatch):
    out, before = old_bundle
    new = _tested(model, tmp_path, "the new bundle")
    fill_the_disk(monkeypatch)
    with pytest.raises(bundling.BundleError, match="No space left"):
        bundling.write_bundle(out, new)
    assert _snapshot(out) == before and _leftovers(out) == []


def test_a_finished_bundle_replaces_the_old_one_in_whole(model, tmp_path, old_bundle):
    out, before = old_bundle
    bundling.write_bundle(out, _tested(model, tmp_path, "the new bundle"))
    after = _snapshot(out)
    assert set(after) == set(before) and after != before
    assert b"the new bundle" in after["suite.json"] and _leftovers(out) == []


def test_a_file_the_old_bundle_does_not_list_is_not_swapped_away(model, tmp_path, old_bundle):
    out, _ = old_bundle
    mine = out / "notes.txt"
    mine.write_text("the user's notes\n", encoding="utf-8")
    with pytest.raises(bundling.BundleError, match=r"notes\.txt, which its old bundle does not"):
        bundling.write_bundle(out, _tested(model, tmp_path, "the new bundle"))
    assert mine.read_text(encoding="utf-8") == "the user's notes\n"
