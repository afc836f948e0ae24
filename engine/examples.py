"""The bundled example schemas and prompts (resources/examples)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

from engine.settings import GenerationSettings


@dataclass(frozen=True, slots=True)
class Example:
    name: str  # file stem, e.g. "currency"
    title: str  # the schema's "title", shown in the Examples menu
    shows: str  # what the example is chosen to show, in one line (the menu's tooltip)
    schema_text: str
    prompt: str
    # What the example needs changed from the usual settings to finish ({name}.settings.json),
    # such as a larger max_tokens for a long output.
    generation: dict[str, Any] = field(default_factory=dict)

    def settings(self, base: GenerationSettings) -> GenerationSettings:
        """`base` with the example's own settings in place."""
        return dataclasses.replace(base, **self.generation)


# Each example, in menu order, with what it is chosen to show.
SHOWS = {
    "currency": "An enum with an UNKNOWN member: the model may say the text does not tell.",
    "person": "The person, name first; null is allowed where the text says nothing.",
    "invoice": "An array of line items with numbers: a long output that brings its own max tokens.",
    "ticket": "Every field required, yet nothing forces an invented value: UNKNOWN, or null.",
    "review": "Classification: one of four labels and an integer rating held between 1 and 5.",
    "address": "Patterns held as the model writes: a UK postcode and a two-letter country code.",
    "event": "Formats: start and end can only be RFC 3339 date-times with an offset.",
    "function_call": "Tool calling: oneOf two tools named by const, so the arguments fit the tool.",
    "order": "$defs and $ref: one address for shipping and billing, line items sharing a product.",
}
EXAMPLE_ORDER = tuple(SHOWS)
_SETTING_NAMES = frozenset(f.name for f in dataclasses.fields(GenerationSettings))


def load_example(name: str) -> Example:
    folder = files("resources.examples")
    schema_text = folder.joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    prompt = folder.joinpath(f"{name}.prompt.txt").read_text(encoding="utf-8")
    title = json.loads(schema_text).get("title", name)
    settings_file = folder.joinpath(f"{name}.settings.json")
    generation = json.loads(settings_file.read_text("utf-8")) if settings_file.is_file() else {}
    unknown = set(generation) - _SETTING_NAMES
    if unknown:  # a bundled file: a typo is a bug, caught by the tests that load each example
        raise ValueError(f"{name}.settings.json: unknown settings {sorted(unknown)}")
    return Example(name, title, SHOWS[name], schema_text, prompt, generation)


def examples() -> list[Example]:
    return [load_example(name) for name in EXAMPLE_ORDER]
