"""Settings widgets that say what they did: a spin box that names a value it clamped, and a
model field whose placeholder is cut at a word, never inside the model's name."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent, QValidator
from PySide6.QtWidgets import QLineEdit, QSpinBox, QWidget


class ClampingSpinBox(QSpinBox):
    """QSpinBox refuses a keystroke that takes the number past its range, so 999999 typed
    into a box of 0..999 silently reads 999. This one lets the number be typed, clamps it
    when editing ends, and emits clamped(typed, kept) so the panel can say so."""

    clamped = Signal(int, int)

    def validate(self, text: str, pos: int) -> object:
        answer = super().validate(text, pos)
        state = answer[0] if isinstance(answer, tuple) else answer
        if state == QValidator.State.Invalid and self._outside(text) is not None:
            return (QValidator.State.Intermediate, text, pos)
        return answer

    def fixup(self, text: str) -> str:
        typed = self._outside(text)
        if typed is None:
            return super().fixup(text)
        kept = max(self.minimum(), min(self.maximum(), typed))
        self.clamped.emit(typed, kept)
        return str(kept)

    def _outside(self, text: str) -> int | None:
        """The typed number when it lies outside the range, else None."""
        try:
            value = int(text.strip())
        except ValueError:
            return None
        return value if not self.minimum() <= value <= self.maximum() else None


class FittedPlaceholder(QLineEdit):
    """A line edit showing the longest of its placeholders that fits its width: elided,
    "default: Gemma 3 270M (Q4_K_M)" read "default: Gemma 3 27…", a 27B model."""

    def __init__(self, placeholders: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._placeholders = placeholders  # longest first
        self.setPlaceholderText(placeholders[-1])

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # The room the text gets: the contents, less the frame and the clear button.
        room = self.contentsRect().width() - self.textMargins().left() - 2 * self.height()
        metrics = self.fontMetrics()
        fits = (p for p in self._placeholders if metrics.horizontalAdvance(p) <= room)
        self.setPlaceholderText(next(fits, self._placeholders[-1]))
