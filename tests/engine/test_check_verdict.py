"""What explains a grammar accepting an instance jsonschema rejects: the compiler's own
report of the failing keyword, on the subschema jsonschema judged by."""

from __future__ import annotations

from engine.check.verdict import InstanceVerdict, explanation, schema_errors
from engine.grammar.report import Unenforced


def _explained(schema, instance, gaps):
    return explanation(schema, schema_errors(instance, schema), gaps)


def test_the_failing_keyword_at_its_path_explains():
    schema = {"properties": {"a": {"maximum": 5}}}
    gap = Unenforced("$.properties.a", "maximum", "not in the grammar")
    assert _explained(schema, {"a": 7}, [gap]) == (gap,)


def test_the_same_keyword_elsewhere_does_not():
    schema = {"properties": {"a": {"maximum": 5}, "b": {"maximum": 5}}}
    gap = Unenforced("$.properties.b", "maximum", "not in the grammar")
    assert _explained(schema, {"a": 7}, [gap]) == ()
    assert _explained(schema, {"a": 7}, [Unenforced("$.properties.a", "minimum", "")]) == ()


def test_a_ref_is_followed_to_the_definition_the_compiler_named():
    schema = {"properties": {"a": {"$ref": "#/$defs/small"}}, "$defs": {"small": {"maximum": 5}}}
    gap = Unenforced("$.$defs.small", "maximum", "")
    assert _explained(schema, {"a": 7}, [gap]) == (gap,)
    assert _explained(schema, {"a": 7}, [Unenforced("$.properties.a", "maximum", "")]) == ()


def test_a_path_that_leads_nowhere_matches_on_the_keyword():
    schema = {"properties": {"a": {"maximum": 5}}}
    gap = Unenforced("$.somewhere.else", "maximum", "")
    assert _explained(schema, {"a": 7}, [gap]) == (gap,)


def test_every_error_needs_an_explanation():
    schema = {"properties": {"a": {"maximum": 5}, "b": {"minLength": 3}}}
    gap = Unenforced("$.properties.a", "maximum", "")
    both = [gap, Unenforced("$.properties.b", "minLength", "")]
    assert _explained(schema, {"a": 7, "b": "x"}, [gap]) == ()
    assert _explained(schema, {"a": 7, "b": "x"}, both) == tuple(both)


def test_anyof_is_explained_by_one_branch_whose_errors_all_are():
    schema = {"anyOf": [{"type": "string"}, {"type": "integer", "maximum": 5}]}
    gap = Unenforced("$.anyOf[1]", "maximum", "")
    assert _explained(schema, 7, [gap]) == (gap,)
    assert _explained(schema, 7, [Unenforced("$.anyOf[0]", "maximum", "")]) == ()
    assert _explained(schema, 7, [Unenforced("$", "anyOf", "")]) != ()


def test_verdict_kinds_and_excerpt():
    over = InstanceVerdict(0, "", '{"a": 1}', valid=True, accepted=False, where="rejected", at=6)
    assert over.over_constrained and not over.unexplained and not over.agrees
    assert over.excerpt() == '{"a": ⟦here⟧1}'
    loose = InstanceVerdict(1, "", "7", valid=False, accepted=True, where="accepted")
    assert loose.unexplained
    gap = Unenforced("$", "maximum", "")
    assert not InstanceVerdict(1, "", "7", False, True, "accepted", explained_by=(gap,)).unexplained


def test_an_error_beneath_an_unenforced_keyword_is_explained_by_it():
    schema = {"type": "array", "items": {"$dynamicRef": "#items"}}
    schema["$defs"] = {"foo": {"$anchor": "items", "type": "string"}}
    gap = Unenforced("$.items", "$dynamicRef", "not supported")
    assert _explained(schema, ["foo", 42], [gap]) == (gap,)
    assert _explained(schema, ["foo", 42], [Unenforced("$", "$dynamicRef", "")]) == ()


def test_a_gap_written_at_the_keywords_own_value_explains_it():
    schema = {"prefixItems": [True], "contains": {"type": "string"}}
    gap = Unenforced("$.contains", "contains", "not with prefix items")
    assert _explained(schema, [1, 2], [gap]) == (gap,)


def test_past_a_ref_check_cannot_follow_a_gap_matches_on_its_keyword():
    schema = {
        "$id": "https://example.com/root",
        "$ref": "list",
        "$defs": {
            "foo": {"$dynamicAnchor": "items", "type": "string"},
            "list": {"$id": "list", "type": "array", "items": {"$dynamicRef": "#/$defs/items"}},
        },
    }
    schema["$defs"]["list"]["$defs"] = {"items": {"$dynamicAnchor": "items", "type": "integer"}}
    gap = Unenforced("$.$defs.list.items", "$dynamicRef", "not supported")
    assert _explained(schema, ["foo"], [gap]) == (gap,)
    assert _explained(schema, ["foo"], [Unenforced("$.$defs.list", "maxItems", "")]) == ()


def test_a_gap_past_a_ref_explains_what_fails_beneath_it():
    # jsonschema's path runs `$ref` -> `$dynamicRef` -> maxLength, but a `$ref` leaves no
    # trace in it: the reported `$dynamicRef` is found by keyword past the root's `$ref`.
    schema = {
        "$id": "https://example.test/base",
        "$ref": "other#/$defs/stuff",
        "$defs": {
            "other": {
                "$id": "other",
                "$defs": {
                    "stuff": {"$dynamicRef": "#length"},
                    "length": {"$dynamicAnchor": "length", "maxLength": 2},
                },
            }
        },
    }
    gap = Unenforced("$.$defs.other.$defs.stuff", "$dynamicRef", "not supported")
    assert _explained(schema, "hey", [gap]) == (gap,)
    assert _explained(schema, "hey", []) == ()
