"""The longest valid output, read off the GBNF: exact on small grammars, None when unbounded."""

from __future__ import annotations

import json
import re

import pytest

from engine.grammar.compile import compile_schema
from engine.workbench.bound import output_bound, parse_gbnf

# Our compiler's separator: a space, or a newline and up to 20 spaces or tabs.
WS = (
    'ws ::= ( " " | "\\n" [ \\t]{0,20} )? ws-break\n'
    'ws-break ::= "" | [^\\x00-\\U0010FFFF] ws-break\n'
)
CHAR = 'char ::= [^"\\\\\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )\n'


def chars(text: str) -> list[int]:
    return list(range(len(text)))


def runs(text: str) -> list[str]:
    """A tokenizer that makes one token of each run of whitespace."""
    return re.findall(r"\s+|\S", text)


@pytest.mark.parametrize(
    ("gbnf", "bound"),
    [
        ('root ::= "ab" | "abcd"', 4),
        ('root ::= "x" [a-z]{2,5}', 6),
        ('root ::= ( "a" | "bb" )? "c"', 3),
        ('root ::= "\\"" char{0,3} "\\""\n' + CHAR, 5),  # an escape counts one character
        ('root ::= "a" [0-9]*', None),
        ('root ::= "a" item+\nitem ::= "b"', None),
        ('root ::= "(" root ")" | "x"', None),  # recursion
        ('root ::= "a" ws "b"\n' + WS, 23),  # a newline and 20 spaces, one token each
        ('root ::= -x-kv\n-x-kv ::= "k"', 1),  # llama.cpp's converter names `_x` this way
    ],
)
def test_bounds_with_one_token_per_character(gbnf: str, bound: int | None) -> None:
    assert output_bound(gbnf, chars) == bound


def test_whitespace_costs_what_the_tokenizer_makes_of_it() -> None:
    assert output_bound('root ::= "a" ws "b"\n' + WS, runs) == 3


def test_the_empty_class_ends_a_recursion() -> None:
    rules = parse_gbnf(WS)
    assert set(rules) == {"ws", "ws-break"}
    assert output_bound("root ::= ws\n" + WS, chars) == 21


def test_unreadable_grammar_has_no_bound() -> None:
    assert output_bound("root ::= @@", chars) is None
    assert output_bound('start ::= "a"', chars) is None


def test_literals_are_counted_by_the_tokenizer() -> None:
    assert output_bound('root ::= "hello world"', lambda t: t.split()) == 2


@pytest.mark.parametrize("compiler", ["maskscope", "llamacpp"])
def test_bounds_of_compiled_schemas(compiler: str) -> None:
    closed = {
        "type": "object",
        "properties": {"k": {"type": "string", "maxLength": 4}},
        "required": ["k"],
        "additionalProperties": False,
    }
    gbnf = compile_schema(json.dumps(closed), compiler).gbnf
    bound = output_bound(gbnf, runs)
    # {"k": "abcd"} is 13 characters; whitespace at each separator is one token at most.
    assert bound is not None and 13 <= bound <= 13 + 6
    open_object = dict(closed, additionalProperties=True)
    assert output_bound(compile_schema(json.dumps(open_object), compiler).gbnf, runs) is None


def test_the_model_tokenizer_counts_a_bounded_example() -> None:
    from engine.workbench.vocab import vocab_tokenizer

    tokenize = vocab_tokenizer()
    assert tokenize('"name"') and tokenize("") == []
    text = '{"type": "string", "enum": ["United States dollar", "euro"]}'
    bound = output_bound(compile_schema(text).gbnf, tokenize)
    assert bound == len(tokenize('"United States dollar"'))


def test_the_vocabulary_alone_tokenizes_as_the_model_does(model) -> None:
    from engine.workbench.vocab import model_tokenizer, vocab_tokenizer

    alone, loaded = vocab_tokenizer(), model_tokenizer(model)
    for text in ['{"name": "Zoë"}', "\n" + " " * 20, "<eos> 12345678901234567890"]:
        assert alone(text) == loaded(text)
