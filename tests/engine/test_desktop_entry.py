"""packaging/'s launcher: a valid desktop entry, and the script that installs it per user."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"
REQUIRED = {"Type": "Application", "Name": "Maskscope", "Icon": "maskscope"}


def read_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_the_entry_names_the_app_its_icon_and_the_window_command() -> None:
    entry = read_entry(PACKAGING / "maskscope.desktop")
    assert {key: entry[key] for key in REQUIRED} == REQUIRED
    assert entry["Exec"] == "maskscope gui"
    assert entry["StartupWMClass"] == "maskscope"  # QGuiApplication.setDesktopFileName
    assert entry["Categories"].endswith(";")


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="no desktop-file-utils")
def test_the_entry_passes_desktop_file_validate() -> None:
    done = subprocess.run(
        ["desktop-file-validate", str(PACKAGING / "maskscope.desktop")], capture_output=True
    )
    assert done.returncode == 0 and not done.stdout, done.stdout  # no errors, no hints


def test_the_script_installs_and_removes_the_launcher_and_icon(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "share")}
    script = PACKAGING / "install-desktop-entry.sh"
    subprocess.run(["sh", str(script)], env=env, check=True, capture_output=True)
    installed = tmp_path / "share" / "applications" / "maskscope.desktop"
    icon = tmp_path / "share" / "icons" / "hicolor" / "scalable" / "apps" / "maskscope.svg"
    assert read_entry(installed)["Exec"] == '"maskscope" gui'  # the command on PATH
    assert icon.read_bytes().startswith(b"<svg")
    subprocess.run(["sh", str(script), "--remove"], env=env, check=True, capture_output=True)
    assert not installed.exists() and not icon.exists()


def test_the_script_refuses_what_it_does_not_know(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "share")}
    script = PACKAGING / "install-desktop-entry.sh"
    done = subprocess.run(["sh", str(script), "--nonsense"], env=env, capture_output=True)
    assert done.returncode == 2 and b"usage:" in done.stderr
    assert not (tmp_path / "share").exists()  # nothing installed
