"""A schema kept in several files, as teams keep them, for the tests of multi-file schemas:
main.json refers to defs/address.json, which refers back to main.json#/$defs/x."""

from __future__ import annotations

import json
from pathlib import Path

MAIN = """{
  "type": "object",
  "properties": {
    "name": {"$ref": "#/$defs/x"},
    "home": {"$ref": "defs/address.json"}
  },
  "required": ["name", "home"],
  "additionalProperties": false,
  "$defs": {"x": {"type": "string", "maxLength": 12}}
}
"""
ADDRESS = """{
  "type": "object",
  "properties": {
    "street": {"$ref": "../main.json#/$defs/x"},
    "zip": {"type": "string", "pattern": "^[0-9]{5}$"}
  },
  "required": ["street", "zip"],
  "additionalProperties": false
}
"""
VALID = {"name": "Ann", "home": {"street": "Elm", "zip": "12345"}}
INSTANCES = [
    VALID,
    {"name": "Ann", "home": {"street": "a street name far too long", "zip": "12345"}},
    {"name": "Ann", "home": {"street": "Elm", "zip": "1234"}},
    {"name": "Ann", "home": {"street": "Elm"}},
    {"name": "Ann"},
]
LABELS = [True, False, False, False, False]


def write_schema(folder: Path) -> Path:
    """main.json and defs/address.json in `folder`; the path of main.json."""
    (folder / "defs").mkdir(parents=True, exist_ok=True)
    (folder / "defs" / "address.json").write_text(ADDRESS, encoding="utf-8")
    main = folder / "main.json"
    main.write_text(MAIN, encoding="utf-8")
    return main


def write_instances(folder: Path) -> Path:
    path = folder / "instances.jsonl"
    lines = [json.dumps({"data": d, "valid": v}) for d, v in zip(INSTANCES, LABELS, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
