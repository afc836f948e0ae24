"""Minimal text edits on a JSON text, placed by the span map: a fix changes only what it must
and keeps the user's layout."""

from __future__ import annotations

import json
from typing import Any

from engine.workbench.entries import TextEdit
from engine.workbench.locate import Path, Spans


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def add_member(spans: Spans, obj: Path, key: str, value: Any, after: str | None = None) -> TextEdit:
    """Insert `"key": value` into the object at `obj`: after member `after` when given
    (on a line of its own, indented like it, where it stands on one), else first."""
    member = f"{dumps(key)}: {dumps(value)}"
    text = spans.text
    if after is not None:
        key_span, value_span = spans.key((*obj, after)), spans.value((*obj, after))
        if key_span and value_span:
            line_start = text.rfind("\n", 0, key_span[0]) + 1
            indent = text[line_start : key_span[0]]
            sep = f",\n{indent}" if not indent.strip() and line_start else ", "
            return TextEdit(value_span[1], value_span[1], sep + member)
    start, end = spans.value(obj) or (0, 0)
    inner = text[start + 1 : end - 1]
    return TextEdit(start + 1, start + 1, member + (", " if inner.strip() else ""))


def append_item(spans: Spans, array: Path, value: Any) -> TextEdit:
    """Insert `value` as the last item of the array at `array`."""
    start, end = spans.value(array) or (0, 0)
    last = _item_count(spans, array) - 1
    if last < 0:
        return TextEdit(start + 1, start + 1, dumps(value))
    item_end = (spans.value((*array, last)) or (end - 1, end - 1))[1]
    return TextEdit(item_end, item_end, f", {dumps(value)}")


def remove_item(spans: Spans, array: Path, index: int) -> TextEdit:
    """Remove item `index` and one comma beside it."""
    here = spans.value((*array, index))
    assert here is not None
    if index > 0:
        before = spans.value((*array, index - 1))
        assert before is not None
        return TextEdit(before[1], here[1], "")
    after = spans.value((*array, 1))
    return TextEdit(here[0], after[0] if after else here[1], "")


def replace_value(spans: Spans, path: Path, value: Any | str, raw: bool = False) -> TextEdit:
    """The value at `path` replaced by `value` (written as JSON, or as is with raw)."""
    start, end = spans.value(path) or (0, 0)
    return TextEdit(start, end, value if raw else dumps(value))


def _item_count(spans: Spans, array: Path) -> int:
    count = 0
    while (*array, count) in spans.values:
        count += 1
    return count
