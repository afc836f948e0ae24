"""The app's icon (resources/icons), for the window, the task bar and the About box."""

from __future__ import annotations

from importlib.resources import files

from PySide6.QtGui import QIcon


def app_icon() -> QIcon:
    """The SVG scales to every size the desktop asks for; the PNG is its 256-pixel rendering,
    for where the SVG image plugin is missing."""
    folder = files("resources.icons")
    icon = QIcon(str(folder / "maskscope.svg"))
    icon.addFile(str(folder / "maskscope.png"))
    return icon
