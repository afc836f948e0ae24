"""Which characters the fonts can draw, asked of Qt's font API, and token text made safe to
show: a token whose characters no installed font covers reads as its code points
(engine/model/tokens.py glyph_safe) rather than as empty boxes.

QFontMetrics.inFontUcs4 answers for a font together with the fallback fonts Qt would draw
the character with (DejaVu Sans says yes to Hangul and Han through Droid Sans Fallback on a
machine that has it), so the answer is what the screen will show. Each answer is cached per
font and character: labels ask for the same characters step after step.
"""

from __future__ import annotations

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics, QGuiApplication

from engine.model.tokens import code_points, exact_piece, glyph_safe

# Asking about a script that needs OpenType shaping (Devanagari) makes Qt try every
# fallback font, and say for each one that lacks the script's tables "OpenType support
# missing": some 25 lines a font. The answer needs none of them.
_FONT_DB_CATEGORY = "qt.text.font.db"

_cache: dict[tuple[str, str], bool] = {}  # (QFont.key(), character) -> drawable


def drawable(ch: str, font: QFont | None = None) -> bool:
    """True if `font` (the application's font when None), or a fallback Qt would use for
    it, has a glyph for the character."""
    font = QGuiApplication.font() if font is None else font
    key = (font.key(), ch)
    known = _cache.get(key)
    if known is None:
        known = _cache[key] = _ask(QFontMetrics(font), ord(ch))
    return known


def shown(text: str, font: QFont | None = None, exact: str | None = None) -> str:
    """The text, or its code points (of `exact`, the token's own text, when `text` is its
    display form) where a character has no glyph in `font`."""
    return glyph_safe(text, lambda ch: drawable(ch, font), exact)


def quoted(text: str, font: QFont | None = None, exact: str | None = None) -> str:
    """The text in quotes as repr writes it (hover texts), or its bare code points."""
    safe = shown(text, font, exact)
    return safe if text and safe == code_points(exact or text) else repr(safe)


def shown_token(text: str, piece: str | None, font: QFont | None = None) -> str:
    """shown, for a token's display text and its piece (whose code points are the true
    ones: engine/model/tokens.py exact_piece)."""
    return shown(text, font, exact_piece(text, piece))


def quoted_token(text: str, piece: str | None, font: QFont | None = None) -> str:
    """quoted, for a token's display text and its piece."""
    return quoted(text, font, exact_piece(text, piece))


def monospace() -> QFont:
    """The font rich text's `font-family: monospace` comes out in (token chips, <pre>)."""
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


def _ask(metrics: QFontMetrics, code_point: int) -> bool:
    """inFontUcs4 with the font database's warnings dropped; anything else said meanwhile
    goes to the handler that was installed before (pytest-qt's, for one)."""
    previous = None

    def quiet(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
        if context.category != _FONT_DB_CATEGORY and previous is not None:
            previous(mode, context, message)

    previous = qInstallMessageHandler(quiet)
    try:
        return metrics.inFontUcs4(code_point)
    finally:
        qInstallMessageHandler(previous)
