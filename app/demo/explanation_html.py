"""The explanation panel's texts as Qt rich text: the output with the step's token marked,
the counts, ΣP written as a sum, and a masked token's explanation.

Tokens are set as small monospace chips (`code_html`), so that a one-letter token such as
`1` stands out from the words around it. All model and schema text is escaped. A token
that the monospace font (with Qt's fallbacks) cannot draw reads as its code points
(app/glyphs.py), in a chip and where the output marks the step's token.
"""

from __future__ import annotations

import html
import re

from app.demo.step_explained import StepExplained, fmt
from app.glyphs import monospace, shown, shown_token
from app.theme import chart_colors
from engine.explain.forbidden import Forbidden


def _rgba(color, alpha: float) -> str:
    return f"rgba({color.red()}, {color.green()}, {color.blue()}, {alpha})"


def code_html(text: str) -> str:
    """Escaped text with each `token` set as a monospace chip."""
    chip = (
        "font-family: monospace; font-weight: bold; "
        f"background-color: {_rgba(chart_colors().foreground, 0.12)}"
    )
    # re.split with a group: the texts between chips at even places, the chips' at odd ones.
    parts = re.split(r"`([^`]*)`", text)
    return "".join(
        f"<span style='{chip}'>&nbsp;{html.escape(shown(part, monospace()), quote=False)}"
        "&nbsp;</span>"
        if i % 2
        else html.escape(part, quote=False)
        for i, part in enumerate(parts)
    )


def output_html(step: StepExplained) -> str:
    """The output before the step, then the step's own token, marked, and a caret."""
    c = chart_colors()
    token = step.record.token_piece
    text = token if token.strip() else step.record.token_text  # whitespace made visible
    tail = "\n" if "\n" in token else ""
    return (
        "<pre style='white-space: pre-wrap; margin: 0'>"
        f"{html.escape(step.before)}"
        f"<span style='background: {_rgba(c.current_step, 0.35)}; font-weight: bold'>"
        f"{html.escape(shown(text, monospace(), token))}</span>"
        f"<span style='color: {c.current_step.name()}'>▏</span>{tail}</pre>"
    )


def count_html(step: StepExplained, plain: bool) -> str:
    r = step.renorm
    if plain:
        of = f" of the {r.n_vocab:,}" if r.n_vocab else ""
        return f"The rules allowed <b>{r.n_valid:,}</b>{of} tokens"
    return f"<b>{html.escape(step.valid_count)}</b>"


def mass_html(step: StepExplained, plain: bool) -> str:
    mass = step.renorm.valid_mass
    exact = "" if step.renorm.exact else " (at least)"
    if plain:
        return f"Share of the model's preference that the rules allowed: <b>{mass:.1%}</b>{exact}"
    return f"valid mass ΣP = <b>{fmt(mass)}</b>{exact}"


def sum_html(step: StepExplained, plain: bool) -> str:
    """ΣP as a sum, then the sampled token's division."""
    prefix = "The allowed share adds up:" if plain else "ΣP over the valid set ="
    text = f"{prefix} <b>{html.escape(step.renorm.sum_written())}</b>"
    row = next((r for r in step.rows if r.chosen and r.division), None)
    if row is None or row.division is None:
        return text
    name = "its rescaled share" if plain else "P′"
    c = row.candidate
    token = code_html(f"`{shown_token(c.text, c.piece, monospace())}`")
    written = html.escape(row.division.written())
    return f"{text}<br>{name} of {token} = P / ΣP = <b>{written}</b>"


def why_html(parts: Forbidden) -> str:
    """The answer first, in bold; then where the output stands and what may come there."""
    question = code_html(f"Why is `{parts.token}` forbidden here?")
    context = " ".join(p for p in (parts.where, parts.schema_says, parts.continues_with) if p)
    return f"<b>{question}</b><br><b>{code_html(parts.reason)}</b><br>{code_html(context)}"
