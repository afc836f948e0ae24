"""Checks that a JSON value read from a file has the types of the dataclass it becomes.

A saved run's steps, result and provenance are built with `StepRecord(**fields)` and alike,
which takes a value of any type: a step whose "valid_mass" is text loaded and then ended a
view's drawing in a TypeError. Each field is checked here against the dataclass's own type
hints, so a field added to a record is checked without a change here, and a wrong one is
named by its place in the file (`$.steps[3].top_raw[0].p_raw`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from enum import Enum
from typing import Any

# A float holds no larger number, and a count beyond a signed 64-bit int indexes nothing.
_MAX_FLOAT = 1.7e308
_MAX_INT = 2**63 - 1


class WrongType(ValueError):
    """A value of the wrong type at `place`."""

    def __init__(self, place: str, why: str) -> None:
        super().__init__(f"{place} {why}")
        self.place, self.why = place, why


_KINDS = {dict: "an object", list: "a list", str: "text", bool: "true or false",
          int: "a whole number", float: "a number", type(None): "null"}  # fmt: skip


def _is(value: Any, hint: Any) -> str:
    """ "" when `value` has the type `hint` at its top level, else what was wanted."""
    if hint is Any:
        return ""
    if hint is bool:
        return "" if isinstance(value, bool) else "true or false"
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            return "a whole number"
        return "" if abs(value) <= _MAX_INT else "a whole number of at most 64 bits"
    if hint is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return "a number"
        return "" if abs(value) <= _MAX_FLOAT else "a number a float holds (1.7e308 at most)"
    if hint is str:
        return "" if isinstance(value, str) else "text"
    if hint in (list, dict):
        return "" if isinstance(value, hint) else _KINDS[hint]
    if hint is type(None):
        return "" if value is None else "null"
    if isinstance(hint, type) and issubclass(hint, Enum):
        ok = any(value == member.value for member in hint)
        return "" if ok else "one of " + ", ".join(json.dumps(m.value) for m in hint)
    if dataclasses.is_dataclass(hint):
        return "" if isinstance(value, dict) else "an object"
    origin = typing.get_origin(hint)
    if origin is tuple or origin is list:
        return "" if isinstance(value, list) else "a list"
    if origin is dict:
        return "" if isinstance(value, dict) else "an object"
    raise TypeError(f"no check for {hint!r}")  # a record grew a type this module lacks


def check(value: Any, hint: Any, place: str) -> None:
    """Raise WrongType naming the first value inside `value` whose type is not `hint`'s."""
    options = typing.get_args(hint) if _is_union(hint) else (hint,)
    wanted = [_is(value, option) for option in options]
    if all(wanted):
        got = _KINDS.get(type(value), "a value")
        raise WrongType(place, f"is {got}, not {' or '.join(wanted)}")
    chosen = options[wanted.index("")]
    if dataclasses.is_dataclass(chosen):
        check_fields(value, chosen, place)
    elif typing.get_origin(chosen) in (tuple, list):
        item = typing.get_args(chosen)[0]
        for i, element in enumerate(value):
            check(element, item, f"{place}[{i}]")


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, type hint, required) for each field of a dataclass."""
    hints = typing.get_type_hints(cls)
    none = dataclasses.MISSING
    return tuple(
        (f.name, hints[f.name], f.default is none and f.default_factory is none)
        for f in dataclasses.fields(cls)
    )


def check_fields(data: dict[str, Any], cls: type, place: str, skip: tuple[str, ...] = ()) -> None:
    """Every field of the dataclass `cls` in the object `data` has its type, and those without
    a default are there; a key that is no field is refused (the record would not take it).
    Fields in `skip` are left to the caller."""
    fields = _fields(cls)
    names = {name for name, _, _ in fields}
    for key in data:
        if key not in names and key not in skip:
            raise WrongType(f"{place}.{key}", "is not a field Maskscope knows")
    for name, hint, required in fields:
        if name in skip:
            continue
        if name in data:
            check(data[name], hint, f"{place}.{name}")
        elif required:
            raise WrongType(f"{place}.{name}", "is missing")
