"""What `maskscope check` reads: MaskBench files, JSON-Schema-Test-Suite files, or a bare
schema with its instances in a JSON-lines file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError
from engine.files import read_text
from engine.schema.nesting import check_line_depth, loads

_LABELLED = frozenset({"data", "valid", "description"})


@dataclass(frozen=True, slots=True)
class FileInstance:
    data: Any
    valid: bool | None  # what the file says; None when it says nothing (jsonschema judges)
    description: str = ""
    # The output as raw text that is not JSON (a suite's `text` instance, such as an object cut
    # off at max_tokens): fed exactly as written, and invalid, since no schema accepts it.
    text: str | None = None


@dataclass(frozen=True, slots=True)
class SchemaCase:
    """One schema and the instances to check against it."""

    file: str
    group: str | None  # a JSON-Schema-Test-Suite group's description; None elsewhere
    schema: Any
    instances: tuple[FileInstance, ...]

    @property
    def name(self) -> str:
        stem = Path(self.file).stem
        return stem if self.group is None else f"{stem}: {self.group}"


def load_cases(path: str, instances: str | None = None) -> list[SchemaCase]:
    """Every case in one file. `instances` (JSON lines) goes with a bare schema only."""
    data = _read_json(path)
    if instances is not None:
        return [SchemaCase(path, None, data, tuple(_read_instances(instances)))]
    if isinstance(data, list):
        return [_group(path, i, g) for i, g in enumerate(data)]
    if isinstance(data, dict) and isinstance(data.get("tests"), list) and "schema" in data:
        return [
            SchemaCase(path, None, data["schema"], tuple(_labelled(path, t) for t in data["tests"]))
        ]
    raise MaskscopeError(
        f"{path} is neither a MaskBench file ({{schema, tests}}) nor a JSON-Schema-Test-Suite "
        "file (a list of groups); for a bare schema give its instances with --instances"
    )


def _group(path: str, index: int, group: Any) -> SchemaCase:
    if not isinstance(group, dict) or "schema" not in group or "tests" not in group:
        raise MaskscopeError(f"{path}: group {index + 1} has no schema and tests")
    description = str(group.get("description") or f"group {index + 1}")
    tests = tuple(_labelled(path, t) for t in group["tests"])
    return SchemaCase(path, description, group["schema"], tests)


def _labelled(path: str, test: Any) -> FileInstance:
    if not isinstance(test, dict) or "data" not in test:
        raise MaskscopeError(f"{path}: a test has no `data`")
    valid = test.get("valid")
    label = valid if isinstance(valid, bool) else None
    return FileInstance(test["data"], label, str(test.get("description") or ""))


def _read_instances(path: str) -> list[FileInstance]:
    """One JSON value a line, or a labelled `{"data", "valid"?, "description"?}` line."""
    found = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        check_line_depth(line, path, number)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MaskscopeError(f"{path}, line {number}: not JSON ({exc.msg})") from None
        if isinstance(value, dict) and "data" in value and set(value) <= _LABELLED:
            found.append(_labelled(path, value))
        else:
            found.append(FileInstance(value, None))
    return found


def _read_json(path: str) -> Any:
    # The depth first: json and every walker after it recurse once a level or more.
    return loads(read_text(path), path)
