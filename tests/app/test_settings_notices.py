"""The settings panel says what it did on its own (issue 27, item 9): a number clamped to
its range, a context shorter than Max tokens, a backend switched with the compiler (with a
way back), and a default model named whole, never cut inside its name."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.settings.panel import SettingsPanel
from engine.settings import GenerationSettings, ModelSettings


def _panel(qtbot) -> SettingsPanel:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def _type(box, text: str) -> None:
    box.lineEdit().selectAll()
    QTest.keyClicks(box, text)
    QTest.keyClick(box, Qt.Key.Key_Return)


def test_a_number_past_the_range_is_clamped_and_said(qtbot):
    panel = _panel(qtbot)
    _type(panel.gpu_layers, "999999")
    assert panel.gpu_layers.value() == 999
    assert panel.notice.isVisible()
    assert "999999" in panel.notice.text() and "set to 999" in panel.notice.text()


def test_max_tokens_past_the_context_is_flagged(qtbot):
    panel = _panel(qtbot)
    panel.set_settings(ModelSettings(n_ctx=4096), GenerationSettings(max_tokens=256))
    assert "context" not in panel.bound_label.text()
    panel.max_tokens.setValue(8192)
    assert panel.bound_label.text() == "⚠ context holds 4096"
    assert "8192" in panel.bound_label.toolTip()


def test_a_compiler_that_takes_the_backend_says_so_and_offers_the_way_back(qtbot):
    panel = _panel(qtbot)
    panel.set_generation_settings(GenerationSettings(compiler="maskscope", backend="llamacpp"))
    assert not panel.notice.isVisible()
    index = panel.compiler.findText("llguidance")
    panel.compiler.setCurrentIndex(index)
    panel.compiler.activated.emit(index)  # what a user's pick in the list emits
    assert panel.backend.currentText() == "llguidance"
    assert "now llguidance" in panel.notice.text()
    panel.notice.linkActivated.emit("maskscope|llamacpp")
    assert (panel.compiler.currentText(), panel.backend.currentText()) == (
        "maskscope",
        "llamacpp",
    )
    assert not panel.notice.isVisible()


def test_settings_set_by_the_program_switch_nothing_aloud(qtbot):
    panel = _panel(qtbot)
    panel.set_generation_settings(GenerationSettings(compiler="llguidance", backend="llguidance"))
    assert not panel.notice.isVisible()


def test_the_default_model_is_never_cut_inside_its_name(qtbot):
    panel = _panel(qtbot)
    field = panel.model_path
    for width in (120, 200, 300, 600):
        field.resize(width, field.height())
        shown = field.placeholderText()
        assert field.fontMetrics().horizontalAdvance(shown) < width or shown == "default"
        assert shown in {"default", "Gemma 3 270M"} or shown.startswith("default: Gemma 3 270M")
    field.resize(600, field.height())
    assert field.placeholderText() == "default: Gemma 3 270M (Q4_K_M)"
