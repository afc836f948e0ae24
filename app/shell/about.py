"""Help → About: what Maskscope is, the versions it runs on (for a bug report), its licence."""

from __future__ import annotations

import html
import importlib.metadata
import platform
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.shell.dialog_buttons import close_and_copy
from engine.llama_build.describe import build_description, package_version

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = (
    "A playground for constrained decoding: watch how a JSON Schema's grammar masks a "
    "language model's next-token choices, step by step."
)


def versions(model: str = "") -> list[tuple[str, str]]:
    import llama_cpp

    rows = [
        ("Maskscope", package_version("maskscope")),
        ("llama-cpp-python", llama_cpp.__version__),
        ("llama.cpp", build_description()),
        ("Qt", f"{qVersion()} (PySide6 {pyside_version})"),
        ("Python", f"{platform.python_version()} on {platform.platform(terse=True)}"),
    ]
    if model:
        rows.append(("Model", model))
    return rows


def licence_text() -> str:
    """The LICENSE file, from the installed package or the source tree; else its name."""
    try:
        dist = importlib.metadata.distribution("maskscope")
        for name in ("LICENSE", "licenses/LICENSE", "LICENSE.txt"):
            if text := dist.read_text(name):
                return text.strip()
    except importlib.metadata.PackageNotFoundError:
        pass
    path = ROOT / "LICENSE"
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    return "MIT License"


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, model: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("About Maskscope")
        self.rows = versions(model)
        table = "".join(
            f"<tr><td><b>{html.escape(k)}</b>&nbsp;&nbsp;</td><td>{html.escape(v)}</td></tr>"
            for k, v in self.rows
        )
        intro = QLabel(
            f"<h2>Maskscope {html.escape(package_version('maskscope'))}</h2>"
            f"<p>{html.escape(SUMMARY)}</p><table>{table}</table>",
            self,
        )
        intro.setObjectName("aboutVersions")
        intro.setWordWrap(True)
        intro.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        licence = QPlainTextEdit(licence_text(), self)
        licence.setObjectName("aboutLicence")
        licence.setReadOnly(True)
        licence.setMinimumHeight(160)
        buttons = close_and_copy(
            self,
            "Copy versions",
            "Copy the versions above, to paste into a bug report",
            self.copy_versions,
        )
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(QLabel("<b>Licence</b>", self))
        layout.addWidget(licence, 1)
        layout.addWidget(buttons)
        self.resize(620, 520)

    def versions_text(self) -> str:
        return "\n".join(f"{k}: {v}" for k, v in self.rows)

    def copy_versions(self) -> None:
        QGuiApplication.clipboard().setText(self.versions_text())
