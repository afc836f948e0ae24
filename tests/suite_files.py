"""Suite files the server and bundle tests write: the small currency suite (three
currencies, a one-shot prompt, two invoices; each test names its own and sets its tokens and
whatever else it holds the server or the bundle to), and a suite exported on the model."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from engine.cli.main import main

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"currency": {"type": "string", "enum": ["USD", "EUR", "UNKNOWN"]}},
    "required": ["currency"],
    "additionalProperties": False,
}
PROMPT = (
    'Invoice 3310\nAmount due: 610.00 EUR\n\nJSON:\n{"currency": "EUR"}\n\n{{invoice}}\n\nJSON:\n'
)
USD_INVOICE = "Invoice 10-4471\nAmount due: 1,950.00 USD"
EUR_INVOICE = "Invoice 2291\nAmount due: 1.240,00 EUR"
TWO_INVOICES = [
    {"id": "usd", "vars": {"invoice": USD_INVOICE}},
    {"id": "eur", "vars": {"invoice": EUR_INVOICE}},
]
HALF_VALID = {"min_validity": 0.5}


def currency_suite(
    name: str, max_tokens: int, temperature: float = 0.3, **fields: Any
) -> dict[str, Any]:
    """A suite file's content: the schema, PROMPT and the two invoices once each at seed 0,
    at least half valid; `fields` replace or add top-level keys (cases, samples, ...), and
    one given as None is left out."""
    suite = {
        "format": "maskscope-suite",
        "version": 1,
        "name": name,
        "schema": SCHEMA,
        "generation": {"max_tokens": max_tokens, "temperature": temperature, "seed": 0},
        "prompt": PROMPT,
        "samples": 1,
        "cases": TWO_INVOICES,
        "thresholds": HALF_VALID,
        **fields,
    }
    return copy.deepcopy({key: value for key, value in suite.items() if value is not None})


def write_suite(folder: Path, suite: dict[str, Any]) -> Path:
    """The suite as FOLDER/NAME.suite.json."""
    path = folder / f"{suite['name']}.suite.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    return path


def export_on(model: Any, suite: Path, root: Path) -> Path:
    """`maskscope export SUITE --out ROOT/out` on the session's `model`, with the suite cache
    in ROOT/cache: the bundle's folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("engine.suite.cache.default_folder", lambda: root / "cache")
        mp.setattr("engine.model.llama.Model.load", lambda *a, **k: model)
        assert main(["export", str(suite), "--out", str(root / "out")]) == 0
    return root / "out"
