"""Random keystrokes in the real SchemaEditor: the live check never raises, every problem
it lists has a one-line message, and the text is exactly what the keystrokes made of it
(the user's edit survives the check). Widget-level, no model.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QTextCursor

from app.workbench.schema_editor import SchemaEditor

EXAMPLES = sorted(Path(__file__).resolve().parents[2].glob("resources/examples/*.schema.json"))
CHECK_MS = 30_000  # the check compiles on a helper thread; 2 busy cores are slow
CHARS = st.sampled_from(list('{}[]":,0123456789.-e tfnul\\\n'))
# (position as a share of the text, characters to delete there, text typed there)
KEYSTROKES = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 3), st.text(CHARS, max_size=2)),
    min_size=1,
    max_size=6,
)


def _type(editor: SchemaEditor, text: str, where: float, delete: int, typed: str) -> str:
    """Delete then type at a spot through a text cursor, as keystrokes do; returns the text
    the edit should leave."""
    at = int(where * len(text))
    cursor = QTextCursor(editor.editor.document())
    cursor.setPosition(at)
    cursor.setPosition(min(at + delete, len(text)), QTextCursor.MoveMode.KeepAnchor)
    cursor.insertText(typed)
    return text[:at] + typed + text[min(at + delete, len(text)) :]


@settings(
    max_examples=6,  # 6 examples of up to 6 keystrokes: a few dozen edits
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(example=st.sampled_from(EXAMPLES), keystrokes=KEYSTROKES)
def test_random_keystrokes_keep_the_text_and_every_problem_has_a_message(
    qtbot, example, keystrokes
):
    editor = SchemaEditor()
    qtbot.addWidget(editor)
    expected = example.read_text(encoding="utf-8")
    editor.set_text(expected)
    for where, delete, typed in keystrokes:
        expected = _type(editor, expected, where, delete, typed)
        qtbot.wait(1)  # the debounce timer restarts between keystrokes, as when typing
    qtbot.waitUntil(editor.is_current, timeout=CHECK_MS)
    assert editor.text() == expected == editor.editor.toPlainText()
    for problem in editor.problems():
        assert problem.message.strip() and "\n" not in problem.message, problem
    assert editor.message.text()  # the summary line says something
