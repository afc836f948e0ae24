"""Token labels for the candidate chart: whitespace drawn as symbols, cut to a fixed width.

A token's display text (engine/model/tokens.py) spells a newline as the two characters
``\\n``, which a label cannot tell from a token that really is a backslash and an n (common
inside JSON strings). Where the exact piece is known and the display text is just its
readable form, labels are made from the piece instead; byte tokens (<0x20>) and special
tokens keep their display text, which must read differently from ordinary tokens.

Between its whitespace, a token with a character that the label's font (with Qt's
fallbacks) cannot draw reads as its code points, "✗U+094D U+092D", "␣U+091C U+0932" (its
whitespace stays a symbol, so that the many tokens that start with a space still differ in
a label cut to its width), and one that starts with a combining mark gets a dotted circle
to sit on, "✗◌्", so that the mark never fuses with the ✗ (app/glyphs.py).

Code points take more room than the text they stand for: a label that has them may be up to
`wide_px` wide (the chart widens its label column to fit, app/chart/candidate_bars.py), and
is cut between two code points, never inside one ("✗␣U+0915 U+093E…"), the ✗ kept.
"""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

from app.glyphs import shown
from engine.model.tokens import exact_piece, readable_piece
from engine.records import Candidate

WHITESPACE_SYMBOLS = {" ": "␣", "\n": "↵", "\t": "⇥"}
RUN_FOLD = 4  # a run of this many equal whitespace characters or more reads "␣×8"
MASKED_MARK = "✗"
_WHITESPACE = f"([{''.join(WHITESPACE_SYMBOLS)}]+)"


def visible_text(candidate: Candidate) -> str:
    """The token's text with every space, newline and tab shown as a symbol."""
    piece = _clean_piece(candidate)
    if piece is None:
        return candidate.text  # no piece, or bytes that only the display form shows
    return "".join(_fold(run) for run in _runs(piece))


def label_text(candidate: Candidate, font: QFont) -> str:
    """visible_text, with each stretch between whitespace that `font` cannot draw shown as
    its code points."""
    piece = _clean_piece(candidate)
    if piece is None:
        return shown(candidate.text, font, exact_piece(candidate.text, candidate.piece))
    # re.split with a group: the stretches at even places, the whitespace at odd ones.
    parts = re.split(_WHITESPACE, piece)
    return "".join(
        "".join(_fold(run) for run in _runs(part)) if i % 2 else shown(part, font)
        for i, part in enumerate(parts)
    )


def _clean_piece(candidate: Candidate) -> str | None:
    """The piece, when the label can be made from it: only plain characters and the
    whitespace that has a symbol, and the display text just its readable form."""
    piece = candidate.piece
    if (
        not piece
        or any(not (ch in WHITESPACE_SYMBOLS or _plain(ch)) for ch in piece)
        or readable_piece(piece.encode("utf-8")) != candidate.text
    ):
        return None
    return piece


def _plain(ch: str) -> bool:
    return ch.isprintable() and not ch.isspace() and ch != "\ufffd"


def _runs(text: str) -> list[str]:
    """Maximal runs of one repeated character: "\\n\\n  a" -> ["\\n\\n", "  ", "a"]."""
    runs: list[str] = []
    for ch in text:
        if runs and runs[-1][0] == ch:
            runs[-1] += ch
        else:
            runs.append(ch)
    return runs


def _fold(run: str) -> str:
    symbol = WHITESPACE_SYMBOLS.get(run[0])
    if symbol is None:
        return run
    return f"{symbol}×{len(run)}" if len(run) >= RUN_FOLD else symbol * len(run)


_CODE_POINT = re.compile(r"U\+[0-9A-F]{4,6}")


class LabelMaker:
    """Axis labels of a fixed pixel width (`wide_px` for one that shows code points),
    cached per token: the same tokens come back step after step, and eliding text costs
    more than a dictionary look-up."""

    def __init__(self, font: QFont, width_px: int, wide_px: int | None = None) -> None:
        self._font = font
        self._metrics = QFontMetrics(font)
        self._width = width_px
        self._wide = max(width_px, wide_px or width_px)
        # Keyed by text too: ids mean other tokens once another model is loaded.
        self._cache: dict[tuple[int, bool, str], str] = {}

    def label(self, candidate: Candidate) -> str:
        key = (candidate.id, candidate.valid, candidate.text)
        label = self._cache.get(key)
        if label is None:
            text = label_text(candidate, self._font)
            text = text if candidate.valid else f"{MASKED_MARK}{text}"
            if _CODE_POINT.search(text) and not _CODE_POINT.search(visible_text(candidate)):
                label = self._cut_code_points(text)
            else:
                label = self._metrics.elidedText(text, Qt.TextElideMode.ElideRight, self._width)
            self._cache[key] = label
        return label

    def width(self, label: str) -> int:
        """The label's width in pixels, in this maker's font."""
        return self._metrics.horizontalAdvance(label)

    def _cut_code_points(self, text: str) -> str:
        """The text within `wide_px`, cut after its last whole code point that fits."""
        if self.width(text) <= self._wide:
            return text
        ends = [m.end() for m in _CODE_POINT.finditer(text)]
        for end in reversed(ends):
            cut = text[:end] + "…"
            if self.width(cut) <= self._wide:
                return cut
        return self._metrics.elidedText(text, Qt.TextElideMode.ElideRight, self._wide)
