"""Why a masked token is forbidden: on a real saved run, and on built steps for each place
the output can stand (mid-string, mid-number, mid-key, after a comma, nested arrays)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.explain.forbidden import (
    continues_sentence,
    explain_forbidden,
    output_before,
    piece_of,
    why_forbidden,
)
from engine.explain.schema_at import describe, schema_at
from engine.records import Candidate, StepRecord
from engine.runs.saved import SavedRun, load_run

RUNS = Path(__file__).parent.parent / "data" / "runs"


@pytest.fixture(scope="module")
def run() -> SavedRun:
    return load_run(RUNS / "currency-logits.json")


def step(valid: list[str], masked: list[str], n_valid: int | None = None) -> StepRecord:
    """A step whose candidates are these pieces, likeliest first, valid ones before masked."""
    pieces = [(p, True) for p in valid] + [(p, False) for p in masked]
    raw = tuple(
        Candidate(i, p, 0.5 / (i + 1), 0.0, ok, piece=p) for i, (p, ok) in enumerate(pieces)
    )
    kept = tuple(c for c in raw if c.valid)
    count = len(kept) if n_valid is None else n_valid
    return StepRecord(0, 0, valid[0], valid[0], raw, kept, 0.5, 0.0, count, True, 1.0, 1, 1, 1)


def why(schema: dict | None, before: str, valid: list[str], masked: str) -> str:
    record = step(valid, [masked])
    return why_forbidden(record, record.top_raw[-1], before, schema)


def masked(record: StepRecord, text: str) -> Candidate:
    return next(c for c in record.top_raw if c.text == text and not c.valid)


def at_currency_value(run: SavedRun) -> int:
    return next(
        i
        for i in range(len(run.records))
        if "".join(output_before(run.records, i).split()).endswith('"currency":"')
    )


def test_the_currency_value_step_names_the_path_the_enum_and_the_first_letters(run):
    i = at_currency_value(run)
    record = run.records[i]
    parts = explain_forbidden(
        record, masked(record, "1"), output_before(run.records, i), run.schema_text
    )
    assert parts.where == "The output is inside the string at $.currency, just opened."
    assert parts.schema_says == (
        'The schema says $.currency is one of "USD", "EUR", "GBP" or "UNKNOWN".'
    )
    # 15 valid tokens, 10 of them in the record: the likeliest, USD EUR US EU GBP ...
    assert parts.continues_with == (
        "The grammar lets the output continue with 15 valid tokens; "
        "the likeliest start with U, E or G."
    )
    assert parts.reason.startswith("`1` starts with 1: ") and 'none starts with "1"' in parts.reason


def test_a_key_the_object_does_not_take(run):
    i = next(i for i, r in enumerate(run.records) if r.token_piece == "currency")
    record = run.records[i]
    text = why_forbidden(
        record, masked(record, "invoice"), output_before(run.records, i), run.schema_text
    )
    assert "The grammar lets the output continue only with c (1 valid token)." in text
    assert 'takes only "currency" now, and none starts with "i"' in text


def test_a_comma_after_the_last_key(run):
    i = at_currency_value(run) + 1  # after "USD": the closing quote is all that fits
    record = run.records[i]
    text = why_forbidden(
        record, masked(record, '",'), output_before(run.records, i), run.schema_text
    )
    assert 'inside the string at $.currency, which so far reads "USD"' in text
    assert '`",` fits as far as `"`, then comes ,: ' in text
    assert "the object at $ takes no more keys" in text


def test_every_masked_token_of_the_run_gets_a_reason(run):
    for i, record in enumerate(run.records):
        before = output_before(run.records, i)
        for c in (c for c in record.top_raw if not c.valid):
            assert explain_forbidden(record, c, before, run.schema_text).reason


def test_an_old_run_with_fewer_candidates_and_no_logits():
    old = load_run(RUNS / "currency-v1.json")
    i = at_currency_value(old)
    record = old.records[i]
    candidate = next(c for c in record.top_raw if not c.valid)
    assert "continue with 15 valid tokens; the likeliest start with U, E or G" in why_forbidden(
        record, candidate, output_before(old.records, i), old.schema_text
    )


def test_the_start_must_be_the_object():
    schema = {"type": "object"}
    assert "no JSON value starts with that" in why(schema, "", ["{"], "Invoice")
    assert "that starts an array, and $ must be an object" in why(schema, "", ["{"], "[")
    assert "the grammar allows no whitespace here" in why(schema, "", ["{"], "  ")


def test_mid_string_against_an_enum_and_on_closing():
    schema = {"properties": {"c": {"enum": ["USD", "EUR"]}}}
    assert 'none starts with "UK"' in why(schema, '{"c": "U', ["S"], "K")
    assert 'it would close $.c as "US", which is not one of "USD" or "EUR"' in why(
        schema, '{"c": "US', ["D"], '"'
    )


def test_mid_number_of_an_integer():
    schema = {"properties": {"n": {"type": "integer", "minimum": 0}}}
    assert "$.n must be an integer, with no decimal point" in why(schema, '{"n": 1', ["2"], ".5")
    assert "$.n cannot be negative: it is an integer of at least 0" in why(
        schema, '{"n": ', ["1"], "-"
    )


def test_mid_key_and_after_a_comma():
    schema = {"properties": {"currency": {}, "amount": {}}, "additionalProperties": False}
    assert 'none starts with "cure"' in why(schema, '{"cur', ["r"], "e")
    assert 'takes only "amount" now, and none starts with "c"' in why(
        schema, '{"currency": 1, "', ["a"], "c"
    )
    assert 'already has the key "currency"' in why(
        {"properties": {"currency": {}}}, '{"currency": 1, "currency', ["x"], '"'
    )


def test_closing_an_object_that_still_needs_a_key():
    schema = {"properties": {"a": {}, "b": {}}, "required": ["a", "b"]}
    text = why(schema, '{"a": true', [","], "}")
    assert 'The object at $ still needs "b".' in text
    assert 'it would close the object at $, which still needs the key "b"' in text
    # Mid-number, the } ends the number first, then closes the object.
    assert "which still needs the key" in why(schema, '{"a": 1', [","], "}")


def test_nested_arrays_hold_their_item_counts():
    inner = {"type": "array", "items": {"type": "integer"}, "maxItems": 2}
    schema = {"properties": {"m": {"type": "array", "items": inner, "minItems": 1}}}
    assert "the array at $.m[0] holds at most 2" in why(schema, '{"m": [[1, 2', ["]"], ", 3")
    assert "the array at $.m with 0 items; it needs at least 1" in why(
        schema, '{"m": [', ["["], "]"
    )
    assert "that starts a string, and $.m[1][0] must be an integer" in why(
        schema, '{"m": [[1], [', ["1"], '"'
    )


def test_defs_and_patterns_read_through_refs():
    schema = {
        "$defs": {"addr": {"properties": {"country": {"type": "string", "pattern": "^[A-Z]{2}$"}}}},
        "properties": {"shipping": {"$ref": "#/$defs/addr"}},
    }
    text = why(schema, '{"shipping": {"country": "', ["G"], "gb")
    assert "The schema says $.shipping.country is a string matching ^[A-Z]{2}$." in text
    # The pattern is held by the grammar character by character: the valid tokens say which.
    assert (
        "`gb` starts with g, which the grammar does not allow here: $.shipping.country must "
        "be a string matching ^[A-Z]{2}$." in text
    )


def test_too_much_whitespace():
    assert "more whitespace than the grammar allows" in why(None, "{", ["\n", '"'], "\n\n")


def test_without_a_schema_the_syntax_still_explains():
    parts = explain_forbidden(step(['"'], ["x"]), step(['"'], ["x"]).top_raw[-1], "{", None)
    assert parts.schema_says == ""
    assert (
        parts.reason
        == "`x` starts with x: a key must come here, and a key is a string in double quotes."
    )


def test_the_end_token_and_display_forms():
    assert "would end the output here" in why(None, "{", ['"'], "")
    old = Candidate(1, "␣{", 0.1, 0.0, False)  # saved without its piece
    assert piece_of(old) == " {"
    assert '`␣"` starts with a space' in why({"type": "object"}, "", ["{"], ' "')


def test_continues_only_with_when_every_valid_token_is_listed():
    assert continues_sentence(step(["a", "b"], [])) == (
        "The grammar lets the output continue only with a or b (2 valid tokens)."
    )
    assert continues_sentence(step(["a"], [], n_valid=2_000)).startswith(
        "The grammar lets the output continue with 2,000 valid tokens;"
    )


@pytest.mark.parametrize(
    ("schema", "path", "expected"),
    [
        ({"prefixItems": [{"type": "string"}], "items": {"type": "null"}}, [1], {"type": "null"}),
        ({"prefixItems": [{"type": "string"}]}, [0], {"type": "string"}),
        (
            {"properties": {"a": {}}, "additionalProperties": {"type": "integer"}},
            ["b"],
            {"type": "integer"},
        ),
        ({"patternProperties": {"^x-": {"const": 1}}}, ["x-a"], {"const": 1}),
        ({"anyOf": [{"properties": {"a": {"const": 2}}}]}, ["a"], {"const": 2}),
        ({"$defs": {"d": {"type": "null"}}, "items": {"$ref": "#/$defs/d"}}, [3], {"type": "null"}),
        ({"properties": {"a": {}}, "additionalProperties": False}, ["b"], False),
    ],
)
def test_schema_at_resolves_the_path(schema, path, expected):
    assert schema_at(schema, path) == expected


@pytest.mark.parametrize(
    ("schema", "phrase"),
    [
        ({"type": "integer", "minimum": 1, "maximum": 99}, "an integer from 1 to 99"),
        ({"type": "string", "maxLength": 60}, "a string of at most 60 characters"),
        ({"type": ["string", "null"], "format": "date"}, "a string or null in date format"),
        ({"enum": list("abcdefgh")}, 'one of "a", "b", "c", "d", "e", "f" or … (2 more)'),
        ({"const": "x"}, 'exactly "x"'),
        ({"type": "array", "minItems": 1, "maxItems": 4}, "an array from 1 to 4 items"),
        ({"anyOf": [{"type": "string"}, {}]}, "either a string or any JSON value"),
    ],
)
def test_describe_in_a_short_phrase(schema, phrase):
    assert describe(schema, schema) == phrase


def test_a_schema_given_as_text_is_read():
    record = step(["{"], ["["])
    text = json.dumps({"type": "object"})
    assert "must be an object" in why_forbidden(record, record.top_raw[-1], "", text)


def test_keys_in_the_grammars_fixed_order():
    schema = {"properties": {"name": {}, "age": {}}, "additionalProperties": False}
    assert (
        "`age` would write another key: the grammar writes the keys of the object at $ in a "
        'fixed order, and "name" comes next, not "age".'
    ) in why(schema, '{"', ["name"], "age")
    assert 'and "name" comes next, not "age"' in why(schema, "{", ['"name'], '"age')


def test_a_number_out_of_its_bounds():
    schema = {"properties": {"r": {"type": "integer", "minimum": 1, "maximum": 5}}}
    assert "$.r would be 6 or more, above its maximum 5" in why(schema, '{"r": ', ["1"], "6")
    assert "$.r would be 0, below its minimum 1" in why(schema, '{"r": ', ["1"], "0")
    age = {"properties": {"age": {"type": ["integer", "null"], "minimum": 0, "maximum": 130}}}
    assert "$.age would be 340 or more" in why(age, '{"age": 34', [","], "0")
    wide = {"properties": {"x": {"type": "number", "minimum": 10}}}
    assert "$.x would be 0 or 0.…, below its minimum 10" in why(wide, '{"x": ', ["1"], "0")
    # 5 may still become 50: the schema alone does not forbid it, the valid tokens do.
    assert "`5` starts with 5, which the grammar does not allow here" in why(
        wide, '{"x": ', ["1"], "5"
    )


def test_a_shorter_token_for_forced_text():
    schema = {"properties": {"billing": {}}, "additionalProperties": False}
    text = why(schema, '{"', ["billing"], "bill")
    assert "`bill` is the start of the valid `billing`: where the text ahead is forced" in text


def test_alternatives_of_a_oneof():
    tool = {
        "properties": {"name": {"const": "get_weather"}, "days": {"type": "integer"}},
        "required": ["name", "days"],
        "additionalProperties": False,
    }
    other = {
        "properties": {"name": {"const": "convert"}, "to": {"type": "string"}},
        "required": ["name", "to"],
        "additionalProperties": False,
    }
    schema = {"oneOf": [tool, other]}
    text = why(schema, '{"name": "', ["g", "c"], "x")
    assert 'The schema says $.name is either exactly "get_weather" or exactly "convert".' in text
    assert 'none starts with "x"' in text
    # Once `days` is written only the weather tool fits: closing now lacks nothing.
    closing = why(schema, '{"name": "get_weather", "days": 2', ["}"], ",")
    assert "takes no more keys" in closing
    assert 'still needs the key "name"' in why(schema, '{"days": 2', [","], "}")


def test_a_first_character_no_listed_valid_token_has():
    record = step(["1"], ["T"], n_valid=40)  # more valid tokens than the record lists
    schema = {"properties": {"d": {"type": "string", "format": "date-time"}}}
    text = why_forbidden(record, record.top_raw[-1], '{"d": "', schema)
    assert (
        "`T` starts with T, and none of the likeliest valid tokens starts so: $.d must be a "
        "string in date-time format."
    ) in text


def test_on_the_real_model_every_masked_token_is_explained(model, person):
    from engine.runs.headless import run_to_end
    from engine.settings import GenerationSettings

    ex, compiled = person
    records: list[StepRecord] = []
    run_to_end(model, compiled, ex.prompt, GenerationSettings(seed=0), records.append)
    reasons = [
        explain_forbidden(r, c, output_before(records, i), ex.schema_text).reason
        for i, r in enumerate(records)
        for c in r.top_raw
        if not c.valid
    ]
    assert reasons and all(reasons)
    # The model wants `age` or `city` first; the grammar writes `name` first.
    assert any('in a fixed order, and "name" comes next' in r for r in reasons)
