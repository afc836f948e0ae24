"""Export chart (PNG, SVG) to a full disk or an unwritable folder, from the File menu of a
window showing a saved run: the banner names the cause and the file, and the old file stays
whole. The faults are made as tests/disk_faults.py says (the PNG and SVG are drawn in
memory and written with write_atomically, so the same os.fdopen fake reaches them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from app.demo import plugin
from app.main_window import MainWindow
from tests.disk_faults import assert_old_file_whole, fill_the_disk, old_file, read_only_path
from tests.modelless_window import modelless_window

RUN = Path(__file__).parents[1] / "data" / "runs" / "currency-v2.json"


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainWindow]:
    """One window with a saved run replayed in its chart, and no model (none is run)."""
    with modelless_window(tmp_path_factory) as window:
        assert window.open_run(str(RUN))
        yield window


def export_to(win: MainWindow, path: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    win.banner.hide()
    monkeypatch.setattr(plugin, "ask_save_path", lambda *a: str(path))
    return win.demo.export_chart()


@pytest.mark.parametrize("name", ["chart.png", "chart.svg"])
def test_a_full_disk_keeps_the_old_chart(win: MainWindow, tmp_path, monkeypatch, name) -> None:
    target = old_file(tmp_path, name)
    fill_the_disk(monkeypatch)
    assert not export_to(win, target, monkeypatch)
    assert win.banner.isVisible()
    shown = win.banner.label.text()
    assert "Cannot export chart" in shown and "No space left on device" in shown
    assert str(target) in shown
    assert_old_file_whole(target)


def test_an_unwritable_folder_says_so(win: MainWindow, tmp_path, monkeypatch) -> None:
    target = read_only_path(tmp_path, "chart.png")
    assert not export_to(win, target, monkeypatch)
    assert "Not a directory" in win.banner.label.text()


def test_the_export_replaces_the_old_file_when_it_can(win: MainWindow, tmp_path, monkeypatch):
    target = old_file(tmp_path, "chart.png")
    assert export_to(win, target, monkeypatch)
    assert not QImage(str(target)).isNull()
    assert [p.name for p in tmp_path.iterdir()] == ["chart.png"]  # no temporary file left
