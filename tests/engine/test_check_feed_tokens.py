"""Gemma's user-defined tokens (HTML tags) are text to a grammar, not special tokens."""

from __future__ import annotations

from engine.check.feed import grammar_accepts, plain_tokens

STRING = 'root ::= "\\"" [^"]* "\\""'


def test_a_tag_inside_a_string_is_accepted(model):
    # The model's own tokenizer makes `</iframe>` one user-defined token, which llguidance
    # never reads as text: fed whole, a valid string would be refused under any grammar.
    assert any(model.is_user_defined(t) for t in model.tokenize("</iframe>", False, False))
    assert grammar_accepts(model, STRING, '"a</iframe>b"')


def test_only_user_defined_tokens_are_spelled_out(model):
    tokens = plain_tokens(model, "hello </iframe>")
    assert not any(model.is_user_defined(t) for t in tokens)
    assert b"".join(model.piece(t) for t in tokens) == b"hello </iframe>"
    assert tokens[0] == model.tokenize("hello", False, False)[0]
