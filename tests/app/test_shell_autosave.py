"""Autosave and crash restore: the state is written when it changes, marked clean on a
clean quit, and offered back (Restore / Discard) after a crash, including a real kill."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from app.shell.autosave import AUTOSAVE_NAME, RECOVERED_NAME, Autosave, WorkState, read_state
from engine.settings import GenerationSettings
from tests.app.gui_process import GUI, ROOT, gui_env, settings_of
from tests.app.shell_window import open_window


def _die(window: MainWindow) -> None:
    """What a crash leaves: the last autosave, dirty, and no lock held (the process is
    gone). The window is then closed by the test's teardown without a clean mark."""
    autosave = window.crash_restore.autosave
    autosave._timer.stop()
    autosave._lock.unlock()
    autosave.active = False


def test_writes_only_changes_and_marks_a_clean_quit(qtbot, tmp_path: Path) -> None:
    state = WorkState(schema="{}", prompt="p")
    autosave = Autosave(tmp_path, lambda: WorkState(state.schema, state.prompt))
    assert autosave.active and autosave.recovered is None
    assert autosave.save_if_changed()
    assert not autosave.save_if_changed()  # nothing changed: nothing written
    state.schema = '{"type": "string"}'
    assert autosave.save_if_changed()
    saved, clean = read_state(tmp_path / AUTOSAVE_NAME)
    assert saved.schema == '{"type": "string"}' and not clean
    autosave.mark_clean()
    assert read_state(tmp_path / AUTOSAVE_NAME)[1]
    assert Autosave(tmp_path, lambda: state).recovered is None  # clean: nothing offered


def test_a_running_window_is_not_a_crash(qtbot, tmp_path: Path) -> None:
    first = Autosave(tmp_path, lambda: WorkState("{}", ""))
    first.save_if_changed()
    second = Autosave(tmp_path, lambda: WorkState("[]", ""))
    assert not second.active and second.recovered is None
    assert not second.save_if_changed()  # it leaves the first one's file alone
    assert read_state(tmp_path / AUTOSAVE_NAME)[0].schema == "{}"


def test_restore_after_a_crash(qtbot, store: SettingsStore, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.schema_editor.set_text('{"type": "string", "maxLength": 7}')
    window.prompt_pane.set_text("Name a colour:")
    window.settings_panel.set_generation_settings(GenerationSettings(temperature=0.3, seed=42))
    window.panes.dock("chart").hide()
    assert window.crash_restore.autosave.save_if_changed()
    _die(window)

    again = open_window(qtbot, store, monkeypatch)
    banner = again.restore_banner
    assert banner.isVisible() and "did not quit cleanly" in banner.label.text()
    assert again.schema_editor.text() != '{"type": "string", "maxLength": 7}'
    banner.restore_button.click()
    assert not banner.isVisible()
    assert again.schema_editor.text() == '{"type": "string", "maxLength": 7}'
    assert again.prompt_pane.text() == "Name a colour:"
    generation = again.settings_panel.generation_settings()
    assert (generation.temperature, generation.seed) == (0.3, 42)
    assert not again.panes.dock("chart").isVisible()
    assert again.isWindowModified()  # restored work is unsaved work
    assert not (store.data_dir() / RECOVERED_NAME).exists()


def test_discard_forgets_it(qtbot, store: SettingsStore, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.schema_editor.set_text('{"type": "null"}')
    window.crash_restore.autosave.save_if_changed()
    _die(window)
    again = open_window(qtbot, store, monkeypatch)
    again.restore_banner.discard_button.click()
    assert again.schema_editor.text() != '{"type": "null"}'
    again.close()
    third = open_window(qtbot, store, monkeypatch)
    assert not third.restore_banner.isVisible()


def test_an_unanswered_offer_is_made_again(qtbot, store: SettingsStore, monkeypatch) -> None:
    window = open_window(qtbot, store, monkeypatch)
    window.schema_editor.set_text('{"type": "boolean"}')
    window.crash_restore.autosave.save_if_changed()
    _die(window)
    again = open_window(qtbot, store, monkeypatch)
    assert again.restore_banner.isVisible()
    again.close()  # quit without answering
    third = open_window(qtbot, store, monkeypatch)
    assert third.restore_banner.isVisible()
    third.restore_banner.restore_button.click()
    assert third.schema_editor.text() == '{"type": "boolean"}'


def test_discard_all_forgets_every_crash_left_unanswered(qtbot, store, monkeypatch) -> None:
    for schema in ('{"type": "null"}', '{"type": "integer"}', '{"type": "number"}'):
        window = open_window(qtbot, store, monkeypatch)  # the last one's offer left open
        window.schema_editor.set_text(schema)
        window.crash_restore.autosave.save_if_changed()
        _die(window)
    again = open_window(qtbot, store, monkeypatch)
    banner = again.restore_banner
    assert "(2 more after this one)" in banner.label.text()
    assert banner.discard_all_button.isVisible()
    assert "all 3 autosaved states" in banner.discard_all_button.toolTip()
    banner.discard_all_button.click()
    assert not banner.isVisible()
    assert again.schema_editor.text() not in ('{"type": "null"}', '{"type": "integer"}')
    assert not list(store.data_dir().glob("recovered*.json"))
    again.close()
    third = open_window(qtbot, store, monkeypatch)
    assert not third.restore_banner.isVisible()

    # One crash alone: Discard says it all.
    _die(third)
    one = open_window(qtbot, store, monkeypatch)
    one.restore_banner.discard_button.click()  # what third left
    one.schema_editor.set_text('{"type": "array"}')
    one.crash_restore.autosave.save_if_changed()
    _die(one)
    banner = open_window(qtbot, store, monkeypatch).restore_banner
    assert banner.isVisible() and not banner.discard_all_button.isVisible()


@pytest.mark.slow
def test_restore_after_the_process_is_killed(qtbot, tmp_path: Path, monkeypatch) -> None:
    schema = tmp_path / "killed.json"
    schema.write_text('{"type": "string", "enum": ["killed", "alive"]}', encoding="utf-8")
    env = gui_env(tmp_path)
    autosave = tmp_path / "data-home" / "maskscope" / AUTOSAVE_NAME
    process = subprocess.Popen([*GUI, "--schema", str(schema)], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 120
        while not autosave.exists() and time.monotonic() < deadline:
            assert process.poll() is None, "the window quit before it autosaved"
            time.sleep(0.2)
        assert autosave.exists()
    finally:
        process.send_signal(signal.SIGKILL)  # no closeEvent, no clean mark
        process.wait(30)
    assert read_state(autosave)[1] is False

    # The next start, in this process, with the killed window's settings and data folder.
    store = settings_of(tmp_path)
    monkeypatch.setattr(SettingsStore, "data_dir", lambda self: autosave.parent)
    window = open_window(qtbot, store, monkeypatch)
    assert window.restore_banner.isVisible()
    window.restore_banner.restore_button.click()
    assert window.schema_editor.text() == schema.read_text(encoding="utf-8")
    assert window.current_path == str(schema)
