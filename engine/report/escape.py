"""Text from the user or the model, as HTML that shows it and nothing more."""

from __future__ import annotations

import html


def escape(text: object) -> str:
    """html.escape, quotes included, and `{`/`}` as character references too: a page that
    is pasted into a templated site (Vue, Angular, Jinja) then holds no `{{ }}` to run."""
    return html.escape(str(text), quote=True).replace("{", "&#123;").replace("}", "&#125;")
