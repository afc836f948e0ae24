"""Readable token text: whitespace, control and undecodable bytes made visible."""

from __future__ import annotations

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
