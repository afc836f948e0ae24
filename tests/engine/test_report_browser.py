"""The report in a real browser (Debian's headless Chromium): no script runs, and it draws."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from engine.report import render_report
from engine.runs.saved import load_run
from tests.engine.test_report import PAYLOAD, RUNS, hostile

CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
    ),
]
PWNED = "<body data-pwned"
CSP_META = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'\">"
)


def chromium(tmp_path: Path, page: Path, *args: str) -> str:
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dom(tmp_path: Path, html: str) -> str:
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    return chromium(tmp_path, page, "--dump-dom")


@pytest.mark.parametrize(
    "html, runs",
    [
        # The probe works: an unescaped script on a page with no policy does run...
        (f"<!DOCTYPE html><html><body>{PAYLOAD}</body></html>", True),
        # ...and the report's policy alone would stop it, were anything left unescaped.
        (f"<!DOCTYPE html><html><head>{CSP_META}</head><body>{PAYLOAD}</body></html>", False),
    ],
)
def test_the_probe_sees_a_script_that_runs(tmp_path, html, runs):
    assert (PWNED in dom(tmp_path, html)) is runs


def test_no_script_runs_in_a_report_of_hostile_text(tmp_path):
    page = render_report(hostile(load_run(RUNS / "currency-v2.json")))
    shown = dom(tmp_path, page)
    assert PWNED not in shown and "<body>" in shown
    assert "document.body.setAttribute" in shown  # it is there, as text


def test_a_screenshot_of_the_report(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render_report(load_run(RUNS / "currency-v2.json")), encoding="utf-8")
    shot = tmp_path / "report.png"
    chromium(tmp_path, page, f"--screenshot={shot}", "--window-size=1280,2400")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 2400)
    assert len(data) > 100_000, "the screenshot is nearly blank"
