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
    schema_text: str
    prompt: str
    # What the example needs changed from the usual settings to finish ({name}.settings.json),
    # such as a larger max_tokens for a long output.
    generation: dict[str, Any] = field(default_factory=dict)

    def settings(self, base: GenerationSettings) -> GenerationSettings:
        """`base` with the example's own settings in place."""
        return dataclasses.replace(base, **self.generation)


EXAMPLE_ORDER = ("currency", "person", "invoice")
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
    return Example(name, title, schema_text, prompt, generation)


def examples() -> list[Example]:
    return [load_example(name) for name in EXAMPLE_ORDER]
