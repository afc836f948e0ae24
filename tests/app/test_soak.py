"""Long runs and big inputs in the real window on the real model (issue 13 §1 and §2), for
`make soak`: minutes of work, left out of `make test`.

Each test prints its figures (memory, open files, the GUI thread's worst stall), which the
docs/reliability.md quotes. The bounds asserted are leak and hang checks, far
above what is measured, never speed targets.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtGui import QTextCursor

from app.main_window import MainWindow
from engine.records import FinishReason
from engine.runs.saved import SavedRun, load_run
from engine.settings import GenerationSettings, ModelSettings
from tools.bench_probes.probes import LagProbe

pytestmark = pytest.mark.soak

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
LONG_MS = 900_000
LAG_TICK_MS = 10


def rss_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(next(x.split()[1] for x in status.splitlines() if x.startswith("VmRSS:"))) / 1024


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


@contextmanager
def gui_lag() -> Iterator[LagProbe]:
    """The GUI thread's worst stall while the block (and the event loop it spins) runs."""
    probe = LagProbe(LAG_TICK_MS)
    probe.start()
    try:
        yield probe
    finally:
        probe.timer.stop()


def test_twenty_runs_back_to_back_keep_memory_and_files_flat(
    window: MainWindow, use_example, run_to_end: Callable[[MainWindow], None]
) -> None:
    use_example(window, "currency", max_tokens=40, temperature=0.7)
    for _ in range(3):  # first runs build caches (tokenizer, chart items) that stay
        run_to_end(window)
    rss, fds = rss_mb(), open_files()
    with gui_lag() as lag:
        for seed in range(20):
            window.settings_panel.seed.setValue(seed)
            run_to_end(window)
            assert window.last_result is not None and window.last_result.valid
    grown, fds_after = rss_mb() - rss, open_files()
    print(
        f"\n20 runs: RSS {rss:.0f} -> {rss + grown:.0f} MB ({grown:+.1f}), open files "
        f"{fds} -> {fds_after}, worst GUI stall {lag.max_lag_ms:.0f} ms"
    )
    assert grown < 40 and fds_after <= fds + 2


def test_a_5000_step_run_keeps_files_flat_and_memory_to_its_records(
    qtbot, window: MainWindow, run_to_end: Callable[[MainWindow], None]
) -> None:
    window.settings_panel.set_settings(
        ModelSettings(n_ctx=8192), GenerationSettings(max_tokens=5000, temperature=0.7)
    )
    window.schema_editor.editor.setPlainText('{"type": "string", "minLength": 30000}')
    window.prompt_pane.editor.setPlainText("Write a very long story as one JSON string.\nJSON:")
    seen: dict[int, tuple[float, int]] = {}
    steps = [0]

    def at(record: object) -> None:
        steps[0] += 1
        if steps[0] in (1000, 5000):
            seen[steps[0]] = (rss_mb(), open_files())

    window.controller.sig_step.connect(at)
    with gui_lag() as lag, qtbot.waitSignal(window.sig_run_ended, timeout=LONG_MS):
        assert window.run()
    result = window.last_result
    assert result is not None and result.finish_reason is FinishReason.MAX_TOKENS
    run = window.current_run()
    assert result.n_tokens == 5000 and run is not None and len(run.records) == 5000
    (rss_1k, fds_1k), (rss_5k, fds_5k) = seen[1000], seen[5000]
    per_record_kb = (rss_5k - rss_1k) * 1024 / 4000
    print(
        f"\n5,000 steps: RSS {rss_1k:.0f} MB at step 1,000, {rss_5k:.0f} MB at 5,000 "
        f"({per_record_kb:.1f} kB a step, the records' top-K), open files {fds_1k} -> "
        f"{fds_5k}, worst GUI stall {lag.max_lag_ms:.0f} ms"
    )
    assert fds_5k <= fds_1k + 2 and per_record_kb < 64


def _ten_thousand_lines() -> SavedRun:
    """A replay whose output has 10,000 lines. The model cannot be made to write one in a
    test's time (a JSON string holds no raw newline, and 10,000 steps take minutes), so a
    real saved run's steps are repeated with a line each, candidates and all."""
    run = load_run(RUNS / "currency-logits.json")
    steps = [
        dataclasses.replace(
            run.records[i % len(run.records)],
            step=i,
            token_text=f"line {i}\\n",
            token_piece=f"line {i}\n",
            output_chars=0,
        )
        for i in range(10_000)
    ]
    text = "".join(r.token_piece for r in steps)
    result = dataclasses.replace(run.result, text=text, n_tokens=len(steps))
    return dataclasses.replace(run, records=tuple(steps), result=result)


def test_big_inputs_keep_the_window_answering(qtbot, window: MainWindow) -> None:
    props = {f"field_{i}": {"type": "string", "maxLength": 40} for i in range(22_000)}
    schema = json.dumps({"type": "object", "properties": props}, indent=2)
    assert len(schema) > 1_000_000
    with gui_lag() as schema_lag:
        window.schema_editor.editor.setPlainText(schema)
        qtbot.waitUntil(window.schema_editor.is_current, timeout=LONG_MS)
    window.schema_editor.editor.setPlainText('{"type": "object"}')
    prompt = "The invoice lists many items. " * 3500
    assert len(prompt) > 100_000
    with gui_lag() as prompt_lag:
        window.prompt_pane.editor.setPlainText(prompt)
        qtbot.wait(500)
        end = window.prompt_pane.editor.textCursor()
        end.movePosition(QTextCursor.MoveOperation.End)
        end.insertText("!")  # typing at its end
        with qtbot.waitSignal(window.sig_run_ended, timeout=LONG_MS):
            assert window.run()
    kind, message = window.last_error
    assert kind == "prompt" and "shorten the prompt" in message  # 25k tokens, 4k context
    assert window.prompt_pane.editor.toPlainText() == prompt + "!"
    replay = _ten_thousand_lines()
    with gui_lag() as replay_lag:
        started = time.perf_counter()
        window.show_run(replay)
        qtbot.wait(500)
    shown_s = time.perf_counter() - started - 0.5
    assert window.output_view.raw.toPlainText().count("\n") >= 9_999
    print(
        f"\nworst GUI stall: 1 MB schema {schema_lag.max_lag_ms:.0f} ms, 100 kB prompt "
        f"{prompt_lag.max_lag_ms:.0f} ms, 10,000-line replay {replay_lag.max_lag_ms:.0f} ms "
        f"(shown in {shown_s:.1f} s)"
    )
    assert max(schema_lag.max_lag_ms, prompt_lag.max_lag_ms) < 5_000  # a hang, not a speed
