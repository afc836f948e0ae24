"""GBNF rewrites for llguidance: each must keep the grammar's language exactly."""

from __future__ import annotations

import json

import pytest

from engine.grammar.compile import compile_schema
from engine.grammar.rewrite import distinct_lark_names, fold_bounded_repeats
from engine.masking import make_backend
from engine.masking.llguidance import gbnf_to_lark
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings

# Real converter output for such a schema names rules after the $defs, as here.
CLASHING = """root ::= "{" Tender "," tender "," fooBar "," foo-bar "}"
Tender ::= "\\"Tender\\"" [Tt] tender-x
tender ::= "tender" | [tender]
tender-x ::= "x"
fooBar ::= "fooBar"
foo-bar ::= "foo-bar"
"""


def test_clashing_names_are_renamed_outside_literals_only():
    out = distinct_lark_names(CLASHING)
    assert 'root ::= "{" Tender "," tender-2 "," fooBar "," foo-bar-2 "}"' in out
    assert 'tender-2 ::= "tender" | [tender]' in out  # the literal and class are untouched
    assert 'Tender ::= "\\"Tender\\"" [Tt] tender-x' in out
    assert "foo-bar-2 ::= " in out
    gbnf_to_lark(out)  # llguidance's translation accepts it
    with pytest.raises(Exception, match="already exists"):
        gbnf_to_lark(CLASHING)


def test_names_that_do_not_start_with_a_letter_get_one():
    gbnf = 'root ::= - "," r--x\n- ::= --x{0,5}\n--x ::= "-"\nr--x ::= "y"\n'
    out = distinct_lark_names(gbnf)
    assert out == 'root ::= r- "," r--x\nr- ::= r--x-2{0,5}\nr--x-2 ::= "-"\nr--x ::= "y"\n'
    gbnf_to_lark(out)


def test_names_that_do_not_clash_are_left_as_they_are():
    gbnf = 'root ::= item ("," item)*\nitem ::= [a-z]+\n'
    assert distinct_lark_names(gbnf) == gbnf


def test_bounded_repeat_folds_to_its_exact_equal():
    gbnf = 'root ::= "\\"" (char (char (char)?)?)? "\\""\nchar ::= [a-z]\n'
    assert "char{0,3}" in fold_bounded_repeats(gbnf)


@pytest.mark.slow
def test_schema_whose_names_differ_only_in_case_runs_on_llguidance(model):
    # From MaskBench (Github_ultra---o65323): $defs `Tender` and `tender` used to make
    # llguidance refuse the grammar with "Rule 'tender' already exists".
    schema = {
        "$defs": {
            "Tender": {"type": "object", "properties": {"id": {"type": "integer"}}},
            "tender": {"enum": ["open", "closed"]},
        },
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/Tender"}, "state": {"$ref": "#/$defs/tender"}},
        "required": ["t", "state"],
        "additionalProperties": False,
    }
    compiled = compile_schema(json.dumps(schema), "llamacpp")  # the converter's GBNF
    names = [line.split(" ::= ")[0] for line in compiled.gbnf.splitlines() if " ::= " in line]
    # The clash is real: two rule names that differ only in case (the converter's own
    # spelling of them, `Tender` or `ref-defs-Tender`, varies with its version).
    assert any(n != m and n.lower() == m.lower() for n in names for m in names)
    for backend in ("llguidance", "llamacpp"):
        make_backend(backend, model, compiled).close()
    settings = GenerationSettings(temperature=0.0, max_tokens=60)
    result = run_to_end(model, compiled, "A tender as JSON.\nJSON:", settings)
    assert result.valid, (result.text, result.errors)


@pytest.mark.parametrize(
    ("gbnf", "expected"),
    [
        ('r ::= "x" (c (c (c)?)?)? "y"', 'r ::= "x" c{0,3} "y"'),
        ("r ::= (c (c c?)?)?", "r ::= c{0,3}"),
        ('r ::= ("a" ("a")?)?', 'r ::= "a"{0,2}'),
        ("r ::= ([0-9] ([0-9])?)?", "r ::= [0-9]{0,2}"),
        # Closers of an enclosing group stay; a level holding more than the atom stays.
        ("r ::= (x (c (c)?)?)?", "r ::= (x c{0,2})?"),
        ('r ::= (c (c (c)?)? "z")?', 'r ::= (c c{0,2} "z")?'),
        # maxItems: a unit of several atoms, separator included, in parentheses.
        (
            'r ::= "[" (it ("," space it ("," space it)?)?)? "]"',
            'r ::= "[" (it ("," space it){0,2})? "]"',
        ),
        # `a b?` is not `(a b)?`: a bare innermost mark only folds a single atom.
        ("r ::= (a b (a b?)?)?", "r ::= (a b (a b?)?)?"),
        # Inside a literal or a class, nothing is a chain.
        ('r ::= "(c (c)?)?" [(c]', 'r ::= "(c (c)?)?" [(c]'),
    ],
)
def test_fold_cases(gbnf: str, expected: str):
    assert fold_bounded_repeats(gbnf) == expected


def test_a_chain_65535_levels_deep_folds_in_one_pass():
    n = 65535
    gbnf = 'root ::= "\\"" ' + "(char " * (n - 1) + "(char)?" + ")?" * (n - 1) + ' "\\""\n'
    assert fold_bounded_repeats(gbnf) == 'root ::= "\\"" char{0,65535} "\\""\n'


@pytest.mark.slow
def test_max_length_65535_compiles_and_runs_on_both_backends(model):
    # From MaskBench (Github_medium---o42606): the converter nested 65,535 optionals, and
    # llama.cpp's recursive grammar parser overflowed the stack and killed the process.
    schema = {
        "type": "object",
        "properties": {"label": {"type": "string", "maxLength": 65535}},
        "required": ["label"],
        "additionalProperties": False,
    }
    compiled = compile_schema(json.dumps(schema), "llamacpp")  # the converter's GBNF
    assert "char{0,65535}" in compiled.gbnf
    for backend in ("llguidance", "llamacpp"):
        settings = GenerationSettings(backend=backend, temperature=0.0, max_tokens=30)
        result = run_to_end(model, compiled, "A label.\nJSON:", settings)
        assert result.valid, (backend, result.text, result.errors)


def test_max_items_array_compiles_flat_and_runs_on_llguidance(model):
    # From MaskBench (WashingtonPost---wp_94): maxItems nested its separator-and-item
    # groups ~900 deep, and llguidance refused the grammar as "too deeply nested".
    schema = {"type": "array", "items": {"type": "integer"}, "maxItems": 300}
    compiled = compile_schema(json.dumps(schema), "llamacpp")  # the converter's GBNF
    assert '(integer ("," space integer){0,299})?' in compiled.gbnf
    settings = GenerationSettings(temperature=0.0, max_tokens=30)
    result = run_to_end(model, compiled, "Three small numbers as a JSON array.\nJSON:", settings)
    assert result.finish_reason.value != "error", result.message
