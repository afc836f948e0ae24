"""The span map: every value and key of a JSON text found where it is written."""

from __future__ import annotations

import json
import time

import pytest

from engine.schema.pointer import path_text
from engine.workbench.locate import line_col, locate, path_parts

TEXT = """{
  "type": "object",
  "properties": {
    "a b": {"enum": [1, {"x": null}, []]},
    "esc\\u0041": [[true], "s\\"q"]
  }
}"""


def _at(text: str, span: tuple[int, int] | None) -> str:
    assert span is not None
    return text[span[0] : span[1]]


def test_values_and_keys_are_where_they_are_written() -> None:
    spans = locate(TEXT)
    assert _at(TEXT, spans.value(())) == TEXT
    assert _at(TEXT, spans.value(("type",))) == '"object"'
    assert _at(TEXT, spans.key(("type",))) == '"type"'
    assert _at(TEXT, spans.value(("properties", "a b", "enum"))) == '[1, {"x": null}, []]'
    assert _at(TEXT, spans.value(("properties", "a b", "enum", 1, "x"))) == "null"
    assert _at(TEXT, spans.value(("properties", "a b", "enum", 2))) == "[]"
    # An escaped key is found under the name it spells.
    assert _at(TEXT, spans.key(("properties", "escA"))) == '"esc\\u0041"'
    assert _at(TEXT, spans.value(("properties", "escA", 0, 0))) == "true"
    assert _at(TEXT, spans.value(("properties", "escA", 1))) == '"s\\"q"'


def test_every_value_json_parses_to_what_the_path_names() -> None:
    data = json.loads(TEXT)
    spans = locate(TEXT)
    for path, (start, end) in spans.values.items():
        node = data
        for part in path:
            node = node[part]
        assert json.loads(TEXT[start:end]) == node, path_text(path)


def test_line_and_column_are_one_based() -> None:
    spans = locate(TEXT)
    offset = spans.key(("properties", "a b"))[0]
    assert spans.line_col(offset) == (4, 5) == line_col(TEXT, offset)
    assert spans.line_col(0) == (1, 1) == line_col(TEXT, 0)


def test_a_missing_path_points_at_its_nearest_ancestor() -> None:
    spans = locate(TEXT)
    assert spans.start_of(("properties", "a b", "maxLength")) == spans.key(("properties", "a b"))[0]
    assert spans.start_of(()) == 0


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        ((), "$"),
        (("properties", "age"), "$.properties.age"),
        (("items", 0), "$.items[0]"),
        (("properties", "a b", "x.y"), "$.properties['a b']['x.y']"),
        (("properties", "it's"), '$.properties["it\'s"]'),
    ],
)
def test_paths_read_back_as_written(parts: tuple, text: str) -> None:
    assert path_text(parts) == text
    assert path_parts(text) == parts


def test_jsonschema_spelling_of_odd_keys_is_read() -> None:
    assert path_parts("$.properties['it\\'s']") == ("properties", "it's")
    assert path_parts("nonsense") is None


def test_a_one_megabyte_schema(capsys: pytest.CaptureFixture[str]) -> None:
    props = {
        f"field_{i}": {"type": "string", "description": "text " * 6, "enum": ["a", "b"]}
        for i in range(9000)
    }
    text = json.dumps({"type": "object", "properties": props, "required": list(props)}, indent=2)
    assert len(text) > 1_000_000
    start = time.perf_counter()
    spans = locate(text)
    took = time.perf_counter() - start
    assert len(spans.keys) == 9000 * 4 + 3
    with capsys.disabled():
        print(f"\nlocate: {len(text) / 1e6:.2f} MB schema in {took * 1000:.0f} ms")
