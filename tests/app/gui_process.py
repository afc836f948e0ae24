"""Run `maskscope gui` as a real process, the way a script or a user would, with settings
of its own; imported by the tests of the window's command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QSettings

from app.settings.store import SettingsStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
SCHEMA = ["--schema", str(EXAMPLES / "currency.schema.json")]
PROMPT = ["--prompt-file", str(EXAMPLES / "currency.prompt.txt")]
AUTORUN = ["--autorun", "--quit-after-run"]


def gui_env(config_home: Path) -> dict[str, str]:
    """The environment of a window whose settings and data (the autosave) are under
    config_home, never the user's own."""
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        XDG_CONFIG_HOME=str(config_home),
        XDG_DATA_HOME=str(config_home / "data-home"),
    )
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


GUI = [sys.executable, "-m", "app.main"]


def run_gui(
    config_home: Path, *args: str, cwd: Path = ROOT, timeout: int = 180
) -> subprocess.CompletedProcess:
    """python -m app.main with its settings under config_home, never the user's own."""
    return subprocess.run(
        [*GUI, *args],
        cwd=cwd,
        env=gui_env(config_home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def settings_of(config_home: Path) -> SettingsStore:
    """The settings the window keeps when XDG_CONFIG_HOME is config_home."""
    path = config_home / "Maskscope" / "Maskscope.conf"
    return SettingsStore(QSettings(str(path), QSettings.Format.IniFormat))
