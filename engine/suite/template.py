"""Prompt templates: `{{name}}` placeholders filled from a case's variables.

A placeholder with no value is an error: the prompt would reach the model with a hole in it.
A value that no placeholder uses is only a warning: a cases file often carries columns the
prompt does not need (notes, a source), and a misspelt name is still caught as the missing
placeholder it leaves behind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from engine.errors import SuiteError

# Only {{identifier}} (spaces allowed inside) is a placeholder; other braces, such as a JSON
# example in the prompt, are left as they are.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def placeholders(template: str) -> tuple[str, ...]:
    """The names the template uses, each once, in order of first use."""
    return tuple(dict.fromkeys(PLACEHOLDER.findall(template)))


def render_prompt(template: str, values: Mapping[str, str]) -> str:
    """The template with each placeholder replaced; values are inserted as they are, never
    read again for placeholders."""
    missing = [name for name in placeholders(template) if name not in values]
    if missing:
        names = ", ".join(f"{{{{{name}}}}}" for name in missing)
        raise SuiteError(f"no value for the prompt's {names}")
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def unused_values(template: str, values: Mapping[str, str]) -> list[str]:
    """The variables no placeholder uses (a warning, not an error)."""
    used = set(placeholders(template))
    return [name for name in values if name not in used]
