"""The Compiler choice in the window: every combination the panel offers runs, the note under
the schema is the chosen compiler's report, the choice is remembered, and a cross-check can
show where two compilers' masks differ."""

from __future__ import annotations

import itertools

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from app.main_window import MainWindow
from app.settings.panel import SettingsPanel
from app.settings.store import SettingsStore
from engine.settings import BACKENDS, COMPILERS, GenerationSettings

UNIQUE = '{"type": "array", "uniqueItems": true}'
MULTIPLE_OF_3 = '{"type": "integer", "multipleOf": 3}'


def _offered(combo: QComboBox) -> list[int]:
    return [i for i in range(combo.count()) if combo.model().item(i).isEnabled()]


def test_each_compiler_says_what_it_is(qtbot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    count = len(COMPILERS)
    tips = [panel.compiler.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(count)]
    assert [panel.compiler.itemText(i) for i in range(count)] == list(COMPILERS)
    assert "Maskscope's own" in tips[0] and "llama-cpp-python" in tips[1]
    assert "llguidance backend only" in tips[2]


def test_every_combination_the_panel_offers_runs(qtbot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    seen = set()
    for compiler, backend, cross in itertools.product(COMPILERS, BACKENDS, (False, True)):
        panel.compiler.setCurrentText(compiler)
        if panel.backend.findText(backend) not in _offered(panel.backend):
            continue
        panel.backend.setCurrentText(backend)
        panel.cross_check.setChecked(cross)
        # The outlines pair has nothing to cross-check: the box itself greys.
        assert panel.cross_check_with.isEnabled() == (cross and panel.cross_check.isEnabled())
        for index in _offered(panel.cross_check_with):
            panel.cross_check_with.setCurrentIndex(index)
            settings = panel.generation_settings()
            assert settings.problem() is None, settings
            seen.add((settings.compiler, settings.backend, settings.cross_check_compiler))
    # The premise: the panel offers both kinds of cross-check, and refuses one combination.
    assert ("llamacpp", "llguidance", None) in seen
    assert ("llamacpp", "llguidance", "llguidance") in seen
    assert not any(c == "llguidance" and b == "llamacpp" for c, b, _ in seen)


def test_the_llguidance_compiler_takes_the_llguidance_backend_with_it(qtbot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.set_generation_settings(GenerationSettings(backend="llamacpp", compiler="llguidance"))
    assert panel.backend.currentText() == "llguidance"
    greyed = panel.backend.findText("llamacpp")
    assert greyed not in _offered(panel.backend)
    tip = panel.backend.itemData(greyed, Qt.ItemDataRole.ToolTipRole)
    assert "llguidance backend only" in tip
    panel.compiler.setCurrentText("llamacpp")
    assert greyed in _offered(panel.backend)


def _unenforced(window: MainWindow) -> list[str]:
    return sorted(p.keyword for p in window.schema_editor.problems() if p.kind == "unenforced")


def test_the_problems_are_the_chosen_compilers(qtbot, window: MainWindow) -> None:
    schema, panel = window.schema_editor, window.settings_panel
    panel.compiler.setCurrentText("llamacpp")
    with qtbot.waitSignal(schema.sig_grammar_checked):
        schema.set_text(UNIQUE)
    assert _unenforced(window) == ["uniqueItems"]
    assert "(llamacpp compiler, llguidance backend" in schema.message.text()
    with qtbot.waitSignal(schema.sig_grammar_checked):
        panel.compiler.setCurrentText("llguidance")
    errors = [p.message for p in schema.problems() if p.severity == "error"]
    assert len(errors) == 1 and "uniqueItems" in errors[0]
    assert schema.message.text().startswith("✗ 1 error")
    with qtbot.waitSignal(schema.sig_grammar_checked):
        schema.set_text(MULTIPLE_OF_3)
    assert _unenforced(window) == [] and not schema.has_errors()  # llguidance enforces it
    assert schema.message.text().startswith("✓ will run (llguidance compiler")
    with qtbot.waitSignal(schema.sig_grammar_checked):
        panel.compiler.setCurrentText("llamacpp")
    assert _unenforced(window) == ["multipleOf"]


def test_the_compiler_choice_is_remembered(
    qtbot, window: MainWindow, store: SettingsStore, model_cache
) -> None:
    panel = window.settings_panel
    panel.compiler.setCurrentText("llguidance")
    panel.cross_check.setChecked(True)
    panel.cross_check_with.setCurrentIndex(panel.cross_check_with.findData("llamacpp"))
    window.close()
    remembered = store.generation_settings()
    assert (remembered.compiler, remembered.cross_check_compiler) == ("llguidance", "llamacpp")
    again = MainWindow(store=store, cache=model_cache)
    qtbot.addWidget(again)
    assert again.settings_panel.generation_settings() == panel.generation_settings()
    assert again.schema_editor.compiler == "llguidance"


def test_window_shows_where_two_compilers_masks_differ(
    qtbot, window: MainWindow, use_example, run_to_end
) -> None:
    # The converter, pinned: its whitespace differs from llguidance's compiler's.
    use_example(window, "currency", max_tokens=8, cross_check=True, compiler="llamacpp")
    panel = window.settings_panel
    panel.cross_check_with.setCurrentIndex(panel.cross_check_with.findData("llguidance"))
    assert panel.generation_settings().cross_check_compiler == "llguidance"  # the premise
    run_to_end(window)
    assert window.last_error is None, window.last_error
    steps = [i for i, r in enumerate(window.session.records) if r.disagreement is not None]
    assert steps, "llama.cpp's converter and llguidance's compiler allow different spaces"
    d = window.session.records[steps[0]].disagreement
    assert (d.between, d.primary, d.secondary) == ("compilers", "llamacpp", "llguidance")
    window.step_chart.show_step(steps[0])
    shown = window.step_chart.step_label.text()
    assert "compilers disagree" in shown and "allowed only by the llamacpp compiler" in shown


def test_a_run_the_settings_cannot_make_is_refused_with_the_reason(
    window: MainWindow, monkeypatch
) -> None:
    """The panel greys these out; settings from elsewhere still get a message, not a run."""
    bad = GenerationSettings(compiler="llguidance", backend="llamacpp")
    monkeypatch.setattr(window.settings_panel, "generation_settings", lambda: bad)
    assert not window.run()
    kind, message = window.last_error
    assert kind == "settings" and "llguidance backend only" in message
    assert "llguidance backend only" in window.banner.label.text()
    assert window.run_action.isEnabled()
