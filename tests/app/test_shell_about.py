"""Help → About names the versions Maskscope runs on and its licence."""

from __future__ import annotations

import llama_cpp
import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from app.shell.about import AboutDialog
from tests.app.gui_process import ROOT
from tests.app.shell_window import open_window


def test_about_names_versions_and_licence(qtbot) -> None:
    dialog = AboutDialog(model="gemma-3-270m")
    qtbot.addWidget(dialog)
    text = dialog.findChild(QLabel, "aboutVersions").text()
    for expected in ("Maskscope 0.1.0", llama_cpp.__version__, qVersion(), PySide6.__version__):
        assert expected in text
    assert "compiled with" in dict(dialog.rows)["llama.cpp"]
    assert dict(dialog.rows)["Model"] == "gemma-3-270m"
    licence = dialog.findChild(QPlainTextEdit, "aboutLicence").toPlainText()
    assert licence.startswith("MIT License")
    assert licence == (ROOT / "LICENSE").read_text(encoding="utf-8").strip()
    dialog.copy_versions()
    assert QGuiApplication.clipboard().text().startswith("Maskscope: 0.1.0\nllama-cpp-python: ")


def test_help_menu_opens_it(qtbot, store, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    shown: list[AboutDialog] = []
    monkeypatch.setattr(AboutDialog, "exec", lambda self: shown.append(self) or 0)
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    about = next(a for a in help_menu.actions() if "About" in a.text())
    about.trigger()
    assert len(shown) == 1 and shown[0].windowTitle() == "About Maskscope"
