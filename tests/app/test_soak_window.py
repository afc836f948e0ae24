"""The real window in a real X session survives long runs while a user pokes at it (issue 22
§3), for `make soak`: minutes of work, left out of `make test`.

Xvfb with a window manager (openbox), the window started as `maskscope gui --autorun
--quit-after-run` starts it (through tests/app/soak_window.py, which reports where the panes
are and what reached them), one long run (thousands of tokens) per compiler, and meanwhile
xdotool moves the mouse over the chart and the output text for their tooltips, turns the
wheel over the text, and selects steps by clicking tokens, the step slider and the mass
plot. The window died on SIGSEGV in such runs: an exception in the output's paintEvent. So
the window must end on its own with its usual exit code and no Python error from any Qt
override (PySide prints "Error calling Python override" for one, and a second can crash).
Each test prints its figures, which the docs/reliability.md quotes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.settings import COMPILERS, GenerationSettings, ModelSettings, runs_on
from tests.app.gui_process import ROOT, gui_env, settings_of

pytestmark = pytest.mark.soak

TOOLS = ("Xvfb", "openbox", "xdotool")
MISSING = [tool for tool in TOOLS if shutil.which(tool) is None]
if MISSING:
    pytestmark = [
        pytest.mark.soak,
        pytest.mark.skip(
            reason=f"needs {', '.join(MISSING)} (`make soak` installs xvfb, openbox and xdotool)"
        ),
    ]

WINDOW = Path(__file__).with_name("soak_window.py")
SCREEN = (1600, 1000)
MAX_TOKENS = 4000
MIN_TOKENS = 1500  # "thousands of tokens": 500 strings need at least three tokens each
RUN_LIMIT_S = 1200
SCHEMA = {
    "type": "array",
    "items": {"type": "string", "maxLength": 40},
    "minItems": 500,
}
PROMPT = "List five hundred names of fruits, trees and flowers as a JSON array of strings.\nJSON:"
OVERRIDE_ERROR = "Error calling Python override"


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    """An X server of our own with openbox managing its windows: its DISPLAY."""
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            f"{SCREEN[0]}x{SCREEN[1]}x24",
            "-nolisten",
            "tcp",
        ],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as answer:
        number = answer.readline().strip()
    assert number, "Xvfb did not start"
    name = f":{number}"
    wm = subprocess.Popen(
        ["openbox", "--sm-disable"],
        env=dict(os.environ, DISPLAY=name),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # openbox takes the screen before the first window maps
    try:
        yield name
    finally:
        for process in (wm, xvfb):
            process.terminate()
            process.wait(timeout=10)


class User:
    """xdotool in the soak's X session, acting on the panes the window reports."""

    def __init__(self, display: str, seed: int) -> None:
        self.env = dict(os.environ, DISPLAY=display)
        self.random = random.Random(seed)
        self.actions = 0

    def xdotool(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], env=self.env, check=False, timeout=30)
        self.actions += 1

    def point(self, pane: list[int]) -> tuple[str, str]:
        x, y, width, height = pane
        px = x + self.random.randint(width // 10, max(width // 10, width * 9 // 10))
        py = y + self.random.randint(height // 10, max(height // 10, height * 9 // 10))
        return str(min(max(px, 0), SCREEN[0] - 1)), str(min(max(py, 0), SCREEN[1] - 1))

    def act(self, panes: dict[str, list[int] | None], turn: int) -> None:
        """One of: hover for a tooltip (text, bars, mass plot), the wheel over the text, a
        click on a token, on the slider or on the mass plot (each selects a step), and
        following the run again (the text scrolled to its end, End on the slider) with the
        pointer resting on the text.
        The last is where the window died: the chart follows the newest step, and the output
        outlines it while its token may still wait for the output's next flush. The bars
        are only hovered: a click on a candidate would start a branch."""
        kind = (
            "hover-text",
            "wheel",
            "hover-bars",
            "click-text",
            "hover-mass",
            "click-slider",
            "click-mass",
            "follow-slider",
        )[turn % 8]
        pane = panes.get(kind.split("-")[-1] if "-" in kind else "text")
        text = panes.get("text")
        if not pane or not text or min(pane[2:] + text[2:]) < 8:  # the slider is 15 px high
            return
        x, y = self.point(pane)
        if kind.startswith("hover"):
            self.xdotool("mousemove", "--sync", x, y, "sleep", "1.0")  # Qt's tooltip delay
        elif kind == "wheel":
            button = self.random.choice(("4", "5"))
            self.xdotool("mousemove", "--sync", x, y, "click", "--repeat", "3", button)
        elif kind == "follow-slider":  # the text's end in view: it keeps up as it grows
            rest = self.point(text)
            self.xdotool(
                "mousemove", "--sync", *rest, "click", "--repeat", "200", "--delay", "1", "5"
            )
            self.xdotool("mousemove", "--sync", x, y, "click", "1", "key", "End")
            self.xdotool("mousemove", "--sync", *rest, "sleep", "12.0")
        else:
            self.xdotool("mousemove", "--sync", x, y, "click", "1")


def read_report(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


@pytest.mark.parametrize(
    "compiler",
    [c for c in COMPILERS if runs_on(c, "llguidance")],  # the soak's backend
)
def test_long_runs_survive_tooltips_scrolling_and_step_selection(
    display: str, tmp_path: Path, compiler: str
) -> None:
    schema, prompt = tmp_path / "long.schema.json", tmp_path / "prompt.txt"
    schema.write_text(json.dumps(SCHEMA))
    prompt.write_text(PROMPT)
    home = tmp_path / "config"
    store = settings_of(home)
    store.set_model_settings(ModelSettings(n_ctx=8192))
    store.set_generation_settings(
        GenerationSettings(
            compiler=compiler, backend="llguidance", max_tokens=MAX_TOKENS, temperature=0.7
        )
    )
    store.sync()
    report = tmp_path / "report.json"
    env = dict(
        gui_env(home),
        QT_QPA_PLATFORM="xcb",
        DISPLAY=display,
        PYTHONFAULTHANDLER="1",
        MASKSCOPE_SOAK_REPORT=str(report),
    )
    command = [sys.executable, str(WINDOW), "--schema", str(schema), "--prompt-file", str(prompt)]
    user = User(display, seed=COMPILERS.index(compiler))
    started = time.monotonic()
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        window = subprocess.Popen(
            [*command, "--autorun", "--quit-after-run"],
            cwd=ROOT,
            env=env,
            stdout=stderr,
            stderr=stderr,
        )
        turn = 0
        try:
            while window.poll() is None and time.monotonic() - started < RUN_LIMIT_S:
                panes = read_report(report).get("panes")
                if panes:
                    user.act(panes, turn)
                    turn += 1
                else:
                    time.sleep(0.2)
        finally:
            if window.poll() is None:
                window.kill()
            window.wait(timeout=30)
        wall_s = time.monotonic() - started
        stderr.seek(0)
        log = stderr.read()
    final = read_report(report)
    counts, result = final.get("counts", {}), final.get("result") or {}
    print(
        f"\n{compiler}: exit {window.returncode}, {result.get('n_tokens')} tokens "
        f"({result.get('finish')}), {wall_s:.0f} s, {user.actions} xdotool actions: "
        f"{counts.get('tooltips')} tooltips, {counts.get('wheel')} wheel events, "
        f"{counts.get('token_clicks')} token clicks, {counts.get('slider_moves')} slider "
        f"moves, {counts.get('mass_clicks')} mass-plot clicks"
    )
    tail = log[-3000:]
    assert wall_s < RUN_LIMIT_S, f"the run did not end within {RUN_LIMIT_S} s\n{tail}"
    # 0: valid, 1: invalid or cut off at max tokens; a crash is a signal (negative) instead.
    assert window.returncode in (0, 1), f"the window ended with {window.returncode}\n{tail}"
    assert "Fatal Python error" not in log and OVERRIDE_ERROR not in log, tail
    assert result.get("n_tokens", 0) >= MIN_TOKENS, final
    assert counts.get("tooltips", 0) > 0 and counts.get("wheel", 0) > 0, counts
    selections = ("token_clicks", "slider_moves", "mass_clicks")
    assert sum(counts.get(name, 0) for name in selections) > 0, counts
