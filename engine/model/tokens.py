"""Readable token text: whitespace, control and undecodable bytes made visible, and text
that no font draws shown as its code points."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

_VISIBLE = {
    " ": "␣",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def readable_piece(piece: bytes, special: bool = False) -> str:
    """Show a token's bytes so that nothing in it is invisible.

    Spaces become ␣, newlines and tabs their escapes, other control characters
    and bytes that are not complete UTF-8 (a token may hold half a character)
    become <0xNN>. Special tokens (such as <eos>) keep their own text.
    """
    if special:
        return piece.decode("utf-8", errors="replace") or "<special>"
    if not piece:
        return "∅"
    out: list[str] = []
    i = 0
    while i < len(piece):
        b = piece[i]
        width = _utf8_width(b)
        chunk = piece[i : i + width]
        try:
            ch = chunk.decode("utf-8") if width else None
        except UnicodeDecodeError:
            ch = None
        if ch is None:
            out.append(f"<0x{b:02X}>")
            i += 1
            continue
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append("".join(f"<0x{x:02X}>" for x in chunk))
        i += width
    return "".join(out)


def _utf8_width(lead: int) -> int:
    """Length of the UTF-8 sequence that starts with this byte (0 if it cannot start one)."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


# Shown before a text that starts with a combining mark, so that the mark has a base of its
# own: after "✗" or a quote it would otherwise be drawn onto that character instead. U+25CC is
# the base the Unicode code charts use to show a mark alone.
DOTTED_CIRCLE = "\u25cc"
# Characters that draw nothing and need no glyph: spaces and line breaks (the display form
# spells the ones that matter as ␣ and \n) and control characters.
_NO_GLYPH = frozenset({"Cc", "Zs", "Zl", "Zp"})


def code_points(text: str) -> str:
    """The text's characters as Unicode code points: "U+094D U+092D"."""
    return " ".join(f"U+{ord(ch):04X}" for ch in text)


def starts_with_mark(text: str) -> bool:
    """True if the text's first character is a combining mark (Mn, Mc or Me)."""
    return bool(text) and unicodedata.category(text[0]).startswith("M")


def glyph_safe(text: str, drawable: Callable[[str], bool], exact: str | None = None) -> str:
    """The text as it can be drawn: its code points if `drawable` says some character has no
    glyph (empty boxes would say nothing about which token it is), else the text itself,
    with a dotted circle before a leading combining mark.

    `exact` is the token's own text when `text` is its display form: the code points are
    then the token's, U+0020 for a space rather than U+2423 for the ␣ that shows it.
    """
    if any(unicodedata.category(ch) not in _NO_GLYPH and not drawable(ch) for ch in text):
        return code_points(exact or text)
    return DOTTED_CIRCLE + text if starts_with_mark(text) else text


def exact_piece(text: str, piece: str | None) -> str | None:
    """A token's piece where its display text is just that piece made readable, for
    glyph_safe's `exact`; None where the display shows more than the piece holds (bytes of a
    split character: the piece has U+FFFD there) or there is no piece."""
    return piece if piece and readable_piece(piece.encode("utf-8")) == text else None


def likely_drawable(ch: str) -> bool:
    """For output whose reader's fonts are unknown (the HTML report): False for what no
    font can be trusted to draw as the character it is. Private-use characters (Co) draw as
    whatever a font puts there, or nothing; unassigned code points (Cn) have no glyph in any
    font made for the Unicode version Python knows; surrogates (Cs) are never characters. A
    script's ordinary letters are left to the browser, whose fallback fonts usually cover
    them; the report also gives their code points on hover."""
    return unicodedata.category(ch) not in {"Co", "Cn", "Cs"}
