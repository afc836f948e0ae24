"""Text from the user or the model, as HTML that shows it and nothing more, and tokens as
their code points where no font is likely to draw them."""

from __future__ import annotations

import html

from engine.model.tokens import code_points, glyph_safe, likely_drawable


def escape(text: object) -> str:
    """html.escape, quotes included, and `{`/`}` as character references too: a page that
    is pasted into a templated site (Vue, Angular, Jinja) then holds no `{{ }}` to run."""
    return html.escape(str(text), quote=True).replace("{", "&#123;").replace("}", "&#125;")


def shown_token(text: str) -> str:
    """A token's text as the report shows it, before escaping: its code points where no font
    is likely to draw it, a dotted circle before a leading combining mark (the rule, and why
    it cannot ask a font as the window does: engine/model/tokens.py likely_drawable)."""
    return glyph_safe(text, likely_drawable)


def token_title(text: str) -> str:
    """A title attribute that gives a token's code points on hover when it holds anything
    beyond ASCII: the reader's fonts may lack its script, and boxes would not say which
    characters they stand for. Empty for ASCII, which every font draws, and for a token
    shown as its code points already."""
    if text.isascii() or shown_token(text) == code_points(text):
        return ""
    return f' title="{code_points(text)}"'


def tip_token(text: str) -> str:
    """A token in a hover text: as shown_token, and with its code points after it when it
    holds anything beyond ASCII (see token_title)."""
    safe = shown_token(text)
    return safe if text.isascii() or safe == code_points(text) else f"{safe} ({code_points(text)})"
