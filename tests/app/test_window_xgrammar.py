"""XGrammar in the window: the Compiler box offers it and takes its backend with it, the
xgrammar backend also runs Maskscope's grammar (and can be cross-checked against llguidance
on it), a run on each is valid, and an engine that is not installed is greyed with the line
that installs it."""

from __future__ import annotations

import importlib.util

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from app.main_window import MainWindow
from app.settings.panel import SettingsPanel
from engine.settings import GenerationSettings


def _offered(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count()) if combo.model().item(i).isEnabled()]


def _tip(combo: QComboBox, text: str) -> str:
    return combo.itemData(combo.findText(text), Qt.ItemDataRole.ToolTipRole) or ""


def test_the_xgrammar_compiler_takes_its_backend_and_maskscopes_runs_there(qtbot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.set_generation_settings(GenerationSettings(backend="llamacpp"))
    assert "vLLM" in _tip(panel.compiler, "xgrammar")

    panel.compiler.setCurrentText("xgrammar")
    assert panel.backend.currentText() == "xgrammar"
    assert _offered(panel.backend) == ["xgrammar"]
    assert "xgrammar backend only" in _tip(panel.backend, "llguidance")

    panel.compiler.setCurrentText("maskscope")
    panel.backend.setCurrentText("xgrammar")
    assert _offered(panel.backend) == ["llguidance", "llamacpp", "xgrammar"]
    panel.cross_check.setChecked(True)
    settings = panel.generation_settings()
    assert (settings.compiler, settings.backend, settings.cross_check) == (
        "maskscope",
        "xgrammar",
        True,
    )
    assert settings.problem() is None


def test_an_engine_that_is_not_installed_is_greyed_with_how_to_install_it(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fake: the suite installs XGrammar, so only hiding its module can show the absence.
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xgrammar" else real(name)
    )
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    assert "xgrammar" not in _offered(panel.compiler)
    assert "xgrammar" not in _offered(panel.backend)
    assert "pip install 'maskscope[xgrammar]'" in _tip(panel.compiler, "xgrammar")
    assert "pip install 'maskscope[xgrammar]'" in _tip(panel.backend, "xgrammar")


@pytest.mark.parametrize("compiler", ["xgrammar", "maskscope"])
def test_the_currency_example_runs_valid_on_the_xgrammar_backend(
    window: MainWindow, use_example, run_to_end, compiler: str
) -> None:
    use_example(window, "currency", compiler=compiler, backend="xgrammar", max_tokens=24)
    run_to_end(window)
    assert window.last_error is None, window.last_error
    result = window.last_result
    assert result is not None and result.valid, (result.finish_reason, result.text)
