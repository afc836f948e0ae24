"""Text from the user or the model, as HTML that shows it and nothing more, and tokens as
their code points where no font is likely to draw them."""

from __future__ import annotations

import html

from engine.model.tokens import code_points, exact_piece, glyph_safe, likely_drawable


def escape(text: object) -> str:
    """html.escape, quotes included, and `{`/`}` as character references too: a page that
    is pasted into a templated site (Vue, Angular, Jinja) then holds no `{{ }}` to run."""
    return html.escape(str(text), quote=True).replace("{", "&#123;").replace("}", "&#125;")


def shown_token(text: str, piece: str | None = None) -> str:
    """A token's text as the report shows it, before escaping: its code points (its piece's,
    when known) where no font is likely to draw it, a dotted circle before a leading
    combining mark. The rule, and why it cannot ask a font as the window does:
    engine/model/tokens.py likely_drawable."""
    return glyph_safe(text, likely_drawable, exact_piece(text, piece))


def hover_code_points(text: str, piece: str | None = None) -> str:
    """The code points a reader gets on hovering a token beyond ASCII, since their fonts may
    lack its script and boxes would not say which characters they stand for; empty for
    ASCII, which every font draws (␣ is the display form of a space), and for a token shown
    as its code points already."""
    exact = exact_piece(text, piece) or text
    if all(ch.isascii() or ch == "␣" for ch in exact):
        return ""
    points = code_points(exact)
    return "" if shown_token(text, piece) == points else points


def token_title(text: str, piece: str | None = None) -> str:
    """A title attribute with hover_code_points, or nothing."""
    points = hover_code_points(text, piece)
    return f' title="{points}"' if points else ""


def tip_token(text: str, piece: str | None = None) -> str:
    """A token in a hover text: shown_token, then its hover_code_points in brackets."""
    points = hover_code_points(text, piece)
    return f"{shown_token(text, piece)} ({points})" if points else shown_token(text, piece)
