"""The bundled example schemas and prompts (resources/examples)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files


@dataclass(frozen=True, slots=True)
class Example:
    name: str  # file stem, e.g. "currency"
    title: str  # the schema's "title", shown in the Examples menu
    schema_text: str
    prompt: str


EXAMPLE_ORDER = ("currency", "person", "invoice")


def load_example(name: str) -> Example:
    folder = files("resources.examples")
    schema_text = folder.joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    prompt = folder.joinpath(f"{name}.prompt.txt").read_text(encoding="utf-8")
    title = json.loads(schema_text).get("title", name)
    return Example(name=name, title=title, schema_text=schema_text, prompt=prompt)


def examples() -> list[Example]:
    return [load_example(name) for name in EXAMPLE_ORDER]
