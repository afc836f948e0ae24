"""The grammar a backend runs, its rules by schema path, and schema paths by text position."""

from __future__ import annotations

import json
from functools import cache

import pytest

from engine.examples import load_example
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.grammar.rule_map import RuleMap
from engine.grammar.rule_map import rule_map as map_rules
from engine.masking.grammar_text import Grammar, backend_grammar


@cache
def compiled(name: str, compiler: str = "maskscope") -> CompiledSchema:
    return compile_schema(load_example(name).schema_text, compiler)


def rule_map(compiled: CompiledSchema, grammar: Grammar) -> RuleMap:
    return map_rules(compiled, grammar.text, grammar.language)


def definition(grammar_text: str, rules: RuleMap, name: str) -> str:
    start, end = rules.definitions[name]
    return grammar_text[start:end]


def test_gbnf_for_llamacpp_backend_is_the_compiled_gbnf() -> None:
    c = compiled("currency")
    grammar = backend_grammar(c, "llamacpp")
    assert (grammar.language, grammar.text) == ("gbnf", c.gbnf)


def test_lark_for_llguidance_backend() -> None:
    grammar = backend_grammar(compiled("currency"), "llguidance")
    assert grammar.language == "lark"
    assert grammar.text.startswith("%llguidance")
    assert "start: value" in grammar.text
    assert "::=" not in grammar.text


def test_llguidance_compiler_shows_its_own_grammar() -> None:
    c = compiled("currency", "llguidance")
    grammar = backend_grammar(c, "llamacpp")  # its grammar runs on llguidance only
    assert (grammar.language, grammar.backend) == ("json", "llguidance")
    assert json.loads(grammar.text) == json.loads(c.native or "")
    assert rule_map(c, grammar).definitions == {}


@pytest.mark.parametrize(
    ("backend", "name"), [("llamacpp", "currency"), ("llguidance", "CURRENCY")]
)
def test_currency_both_ways(backend: str, name: str) -> None:
    c = compiled("currency")
    grammar = backend_grammar(c, backend)
    rules = rule_map(c, grammar)
    assert rules.rule_of_path["$.properties.currency"] == name
    assert '"\\"USD\\""' in definition(grammar.text, rules, name)
    # Grammar -> schema: anywhere on the rule's lines names the property.
    _, end = rules.definitions[name]
    assert rules.rule_at(grammar.text, end - 1) == name
    assert rules.path_for_rule(name) == "$.properties.currency"
    root = "root" if backend == "llamacpp" else "start"
    assert rules.path_for_rule(root) == "$"


@pytest.mark.parametrize(
    ("backend", "quantity", "item"),
    [("llamacpp", "quantity", "items-2"), ("llguidance", "QUANTITY", "items_2")],
)
def test_invoice_both_ways(backend: str, quantity: str, item: str) -> None:
    c = compiled("invoice")
    grammar = backend_grammar(c, backend)
    rules = rule_map(c, grammar)
    path = "$.properties.items.items.properties.quantity"
    assert rules.rule_of_path[path] == quantity
    assert definition(grammar.text, rules, quantity).startswith(quantity)
    # A name under the cursor wins over the rule defined on that line: the array's rule
    # names its item rule, which holds the line items' schema.
    array = "array"
    start, end = rules.definitions[array]
    at_item = start + grammar.text[start:end].index(item) + 1
    assert rules.rule_at(grammar.text, at_item) == item
    assert rules.path_for_rule(item) == "$.properties.items.items"
    assert rules.rule_at(grammar.text, start) == array
    assert rules.path_for_rule(array) == "$.properties.items"


def test_rules_without_a_subschema_take_their_holders() -> None:
    c = compiled("invoice")
    grammar = backend_grammar(c, "llamacpp")
    rules = rule_map(c, grammar)
    # The line item's object rule and its members' sequence belong to the line item...
    assert definition(c.gbnf, rules, "object").startswith('object ::= "{" ws props-4')
    assert rules.path_for_rule("object") == "$.properties.items.items"
    assert rules.path_for_rule("props-4") == "$.properties.items.items"
    # ...a key-value pair, to the property it writes...
    kv = next(
        n
        for n in rules.definitions
        if definition(c.gbnf, rules, n).startswith(f'{n} ::= "\\"quantity')
    )
    assert rules.path_for_rule(kv) == "$.properties.items.items.properties.quantity"
    # ...but whitespace is named everywhere, so it belongs to no one subschema.
    assert rules.path_for_rule("ws") is None


def test_only_maskscope_compiler_maps_rules() -> None:
    c = compiled("currency", "llamacpp")
    grammar = backend_grammar(c, "llamacpp")
    rules = rule_map(c, grammar)
    assert rules.definitions and rules.rule_of_path == {}


def test_lark_names_fold_case_and_dashes_and_still_map() -> None:
    # `Tender` and `tender` get the rules `tender` and `tender-2`; the Lark text spells them
    # in capitals with `_` where they are lexemes.
    schema = {
        "type": "object",
        "properties": {"Tender": {"type": "integer"}, "tender": {"type": "boolean"}},
        "required": ["Tender", "tender"],
    }
    c = compile_schema(json.dumps(schema))
    grammar = backend_grammar(c, "llguidance")
    rules = rule_map(c, grammar)
    upper, lower = (
        rules.rule_of_path["$.properties.Tender"],
        rules.rule_of_path["$.properties.tender"],
    )
    assert (upper, lower) == ("TENDER", "TENDER_2")
    assert "INT" in definition(grammar.text, rules, upper)
    assert '"true"' in definition(grammar.text, rules, lower)


def test_rule_paths_name_only_rules_in_the_grammar() -> None:
    c = compiled("invoice")
    defined = {line.split(" ::= ")[0] for line in c.gbnf.splitlines()}
    assert c.rule_paths and all(rule in defined for _, rule in c.rule_paths)
