"""Which tokens keep the output valid UTF-8, from wherever the text so far stopped.

llama.cpp's grammar sampler judges a token that ends inside a character by the range of
code points the bytes so far could still become. That range forgets how the character
began, so after a lone 0xE0 it takes 0x82-0x9F as well as 0xA0-0xBF: the overlong forms
that no UTF-8 text holds, and that a model picking byte tokens writes (measured on Gemma 3's
vocabulary, tests/engine/grammar/test_utf8_soundness.py). No grammar can rule them out, as
the code points they spell are ordinary ones. So the llamacpp backend also asks this guard,
which follows the text's bytes through UTF-8's own automaton (RFC 3629, section 4).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from engine.model.llama import Model

# The automaton's states: between characters, and the ways of being inside one.
BETWEEN, NEED_1, NEED_2, NEED_3, AFTER_E0, AFTER_ED, AFTER_F0, AFTER_F4, BROKEN = range(9)
N_STATES = 9


def _table() -> np.ndarray:
    """TABLE[state, byte] -> next state."""
    table = np.full((N_STATES, 256), BROKEN, dtype=np.int8)
    between = table[BETWEEN]
    between[0x00:0x80] = BETWEEN
    between[0xC2:0xE0] = NEED_1
    between[0xE0] = AFTER_E0
    between[0xE1:0xF0] = NEED_2
    between[0xED] = AFTER_ED  # its next byte stays below 0xA0: no surrogates
    between[0xF0] = AFTER_F0
    between[0xF1:0xF4] = NEED_3
    between[0xF4] = AFTER_F4  # its next byte stays below 0x90: nothing past U+10FFFF
    for state, nxt in ((NEED_1, BETWEEN), (NEED_2, NEED_1), (NEED_3, NEED_2)):
        table[state, 0x80:0xC0] = nxt
    table[AFTER_E0, 0xA0:0xC0] = NEED_1  # 0x80-0x9F would be overlong
    table[AFTER_ED, 0x80:0xA0] = NEED_1
    table[AFTER_F0, 0x90:0xC0] = NEED_2  # 0x80-0x8F would be overlong
    table[AFTER_F4, 0x80:0x90] = NEED_2
    return table


TABLE = _table()


class Utf8Table:
    """For every state and token: the state after the token's bytes (BROKEN: not UTF-8)."""

    def __init__(self, pieces: Sequence[bytes], ends: Sequence[int] = ()) -> None:
        n = len(pieces)
        lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=n)
        flat = np.frombuffer(b"".join(pieces), dtype=np.uint8)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        # Longest first, so that the tokens still going at byte j are the first ones.
        order = np.argsort(-lengths, kind="stable")
        lengths, starts = lengths[order], starts[order]
        run = np.repeat(np.arange(N_STATES, dtype=np.int16)[:, None], n, axis=1)
        flat_table = TABLE.astype(np.int16).ravel()
        for j in range(int(lengths.max(initial=0))):
            k = int(np.count_nonzero(lengths > j))
            run[:, :k] = flat_table[run[:, :k] * 256 + flat[starts[:k] + j]]
        after = np.empty((N_STATES, n), dtype=np.int8)
        after[:, order] = run
        ends = np.asarray(ends, dtype=np.int64)
        after[:, ends] = BROKEN  # an end token closes the text: only between characters
        after[BETWEEN, ends] = BETWEEN
        self.after = after
        self.allowed = after != BROKEN


_tables: weakref.WeakKeyDictionary[Model, Utf8Table] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def table_for(model: Model) -> Utf8Table:
    """The model's table, built once (the pieces of every token, then a few numpy passes)."""
    with _lock:
        table = _tables.get(model)
        if table is None:
            ends = [int(t) for t in model.eog_ids]
            end_set = set(ends)
            pieces = [b"" if t in end_set else model.piece(t) for t in range(model.n_vocab)]
            table = _tables[model] = Utf8Table(pieces, ends)
        return table


class Utf8Guard:
    """One output's place in the automaton, and the tokens that may follow it."""

    def __init__(self, table: Utf8Table) -> None:
        self._table = table
        self.state = BETWEEN

    def allowed(self, token_ids: np.ndarray) -> np.ndarray:
        return self._table.allowed[self.state, token_ids]

    def accept(self, token: int) -> None:
        self.state = int(self._table.after[self.state, token])

    def reset(self) -> None:
        self.state = BETWEEN
