"""Editing without a model run: examples are undoable, files and settings round-trip."""

from __future__ import annotations

from app.main_window import MainWindow
from app.settings.store import SettingsStore
from engine.examples import load_example
from engine.settings import GenerationSettings, ModelSettings


def test_example_over_edits_is_undoable(qtbot, window: MainWindow) -> None:
    editor = window.schema_editor.editor
    editor.setPlainText('{"type": "string"}')
    editor.document().setModified(True)
    window.example_actions["person"].trigger()
    assert '"Person' in window.schema_editor.text()
    assert window.prompt_pane.text() == load_example("person").prompt
    assert window.current_path is None
    window.undo_action.trigger()
    assert window.schema_editor.text() == '{"type": "string"}'


def test_open_and_save_schema(qtbot, window: MainWindow, tmp_path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"type": "integer"}', encoding="utf-8")
    assert window.open_schema(str(path))
    assert window.schema_editor.text() == '{"type": "integer"}'
    assert not window.isWindowModified()
    window.schema_editor.editor.appendPlainText(" ")
    assert window.isWindowModified()
    assert window.save_schema()
    assert path.read_text(encoding="utf-8") == '{"type": "integer"}\n '
    assert window.store.recent_files() == [str(path)]
    assert not window.open_schema(str(tmp_path / "nope.json"))
    assert window.banner.isVisible()


def test_settings_round_trip(store: SettingsStore) -> None:
    model = ModelSettings(path="/m.gguf", n_gpu_layers=3, n_threads=2)
    generation = GenerationSettings(
        max_tokens=9,
        temperature=0.25,
        seed=7,
        top_k=5,
        backend="llamacpp",
        exact_mask=True,
        chat_template=True,
    )
    store.set_model_settings(model)
    store.set_generation_settings(generation)
    assert store.model_settings() == model
    assert store.generation_settings() == generation
    store.set_model_settings(ModelSettings())
    assert store.model_settings() == ModelSettings()


def test_log_scale_toggle(qtbot, window: MainWindow) -> None:
    window.log_action.trigger()
    assert window.step_chart.mass_plot.getPlotItem().ctrl.logYCheck.isChecked()
    window.log_action.trigger()
    assert not window.step_chart.mass_plot.getPlotItem().ctrl.logYCheck.isChecked()


def test_unenforced_keywords_are_flagged_while_typing(qtbot, window: MainWindow) -> None:
    schema = window.schema_editor

    def unenforced() -> list[str]:
        return sorted(p.keyword for p in schema.problems() if p.kind == "unenforced")

    window.settings_panel.compiler.setCurrentText("llamacpp")  # it bounds integers only
    with qtbot.waitSignal(schema.sig_grammar_checked):  # it compiles on a helper thread
        schema.set_text('{"type": "number", "minimum": 0, "multipleOf": 5}')
    assert unenforced() == ["minimum", "multipleOf"]
    # The model loading meanwhile (the window preloads it) checks the text again with its
    # tokenizer: the message may say "checking…" for a moment before it comes back.
    qtbot.waitUntil(lambda: "⚠ 2 warnings" in schema.message.text())
    assert "`minimum` is not enforced" in schema.editor.line_marks()[1][1]  # gutter tooltip
    with qtbot.waitSignal(schema.sig_grammar_checked):
        schema.set_text('{"type": "number"}')
    assert unenforced() == []
    with qtbot.waitSignal(schema.sig_grammar_checked):
        schema.set_text('{"type": "number", "minimum": 0, "multipleOf": 5}')
    with qtbot.waitSignal(schema.sig_grammar_checked):  # our compiler enforces both
        window.settings_panel.compiler.setCurrentText("maskscope")
    assert unenforced() == []
