"""Writing your own schema (issue 27, item 10): File > New, a prompt opened and saved as a
file, and a schema opened from the command line without the last example's prompt."""

from __future__ import annotations

import argparse
import json

from app.main import open_files
from app.shell.schema_files import NEW_SCHEMA


def _args(**given) -> argparse.Namespace:
    names = ("schema", "prompt_file", "open_run", "open_result", "example")
    return argparse.Namespace(**{name: given.get(name) for name in names})


def test_new_gives_an_empty_object_schema_and_prompt_and_undo_brings_them_back(window, use_example):
    use_example(window, "currency")
    old_schema, old_prompt = window.schema_editor.text(), window.prompt_pane.text()
    assert window.new_schema()
    assert window.schema_editor.text() == NEW_SCHEMA
    assert json.loads(NEW_SCHEMA)["type"] == "object"
    assert window.prompt_pane.text() == ""
    assert window.current_path is None and "untitled" in window.windowTitle()
    window.schema_editor.editor.undo()
    window.prompt_pane.editor.undo()
    assert (window.schema_editor.text(), window.prompt_pane.text()) == (old_schema, old_prompt)


def test_a_prompt_is_saved_and_opened_as_a_file(window, monkeypatch, tmp_path):
    window.prompt_pane.set_text("Extract the invoice's currency.\nJSON:")
    path = tmp_path / "invoice.txt"
    monkeypatch.setattr(window, "ask_prompt_path", lambda: str(path))
    assert window.save_prompt_as()
    assert path.read_text(encoding="utf-8") == "Extract the invoice's currency.\nJSON:"
    window.prompt_pane.set_text("something else")
    assert window.open_prompt(str(path))
    assert window.prompt_pane.text() == "Extract the invoice's currency.\nJSON:"
    assert not window.open_prompt(str(tmp_path / "missing.txt"))  # a message, not a crash


def test_a_schema_opened_alone_does_not_keep_another_schemas_prompt(window, use_example, tmp_path):
    use_example(window, "currency")  # the prompt left from the last example
    schema = tmp_path / "mine.json"
    schema.write_text('{"type": "object"}', encoding="utf-8")
    assert open_files(window, _args(schema=str(schema)))
    assert window.prompt_pane.text() == ""
    prompt = tmp_path / "mine.txt"
    prompt.write_text("Mine:", encoding="utf-8")
    assert open_files(window, _args(schema=str(schema), prompt_file=str(prompt)))
    assert window.prompt_pane.text() == "Mine:"
