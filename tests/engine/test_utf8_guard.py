"""The UTF-8 guard against Python's own strict decoder, on token pieces cut anywhere."""

from __future__ import annotations

import codecs

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.masking.utf8 import BETWEEN, Utf8Guard, Utf8Table

# Pieces as a vocabulary holds them: whole characters of every width, characters cut
# part-way (a byte-fallback token), and any byte at all.
_CHARS = st.characters(codec="utf-8").map(lambda c: c.encode())
_PIECES = st.one_of(
    _CHARS,
    st.tuples(_CHARS, st.integers(1, 3)).map(lambda t: t[0][: t[1]]),
    st.tuples(_CHARS, st.integers(1, 3)).map(lambda t: t[0][t[1] :]),
    st.binary(min_size=1, max_size=4),
)
END = 0  # token 0 plays the end-of-generation token


def _valid_prefix(data: bytes, final: bool) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        decoder.decode(data, final=final)
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    pieces=st.lists(_PIECES, min_size=2, max_size=40),
    picks=st.lists(st.integers(0, 10_000), min_size=1, max_size=12),
)
def test_guard_allows_exactly_what_keeps_the_text_utf8(pieces, picks):
    vocab = [b"", *pieces]
    guard = Utf8Guard(Utf8Table(vocab, ends=[END]))
    ids = np.arange(len(vocab))
    text = b""
    for pick in picks:
        allowed = guard.allowed(ids)
        for token in ids[1:]:
            assert allowed[token] == _valid_prefix(text + vocab[token], final=False), (
                text,
                vocab[token],
            )
        assert allowed[END] == _valid_prefix(text, final=True)
        choices = ids[1:][allowed[1:]]
        if not len(choices):
            return
        token = int(choices[pick % len(choices)])
        guard.accept(token)
        text += vocab[token]


def test_overlong_surrogate_and_past_unicode_are_refused():
    """The cases llama.cpp's own check lets through, spelt out."""
    vocab = [b"", b"\xe0", b"\x9f", b"\xa0", b"\xed", b"\xf4", b"\x90", b"\x8f", b"\xf5"]
    table = Utf8Table(vocab, ends=[END])
    guard = Utf8Guard(table)
    assert not guard.allowed(np.array([8]))[0]  # 0xF5 starts nothing
    guard.accept(1)  # 0xE0
    assert guard.allowed(np.array([2, 3])).tolist() == [False, True]  # overlong, then fine
    assert not guard.allowed(np.array([END]))[0]  # the text cannot end mid-character
    guard.reset()
    guard.accept(4)  # 0xED: a surrogate would follow with 0xA0
    assert guard.allowed(np.array([3, 2])).tolist() == [False, True]
    guard.reset()
    guard.accept(5)  # 0xF4: 0x90 would pass U+10FFFF
    assert guard.allowed(np.array([6, 7])).tolist() == [False, True]
    assert guard.state != BETWEEN
