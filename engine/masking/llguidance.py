"""llguidance: full-vocabulary masks in well under a millisecond, from the same GBNF, or from
llguidance's own grammar when its JSON Schema compiler made it."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import llama_cpp
import llguidance
import numpy as np
from llguidance.gbnf_to_lark import gbnf_to_lark as _llg_gbnf_to_lark
from llguidance.numpy import (
    allocate_token_bitmask,
    fill_next_token_bitmask,
    fill_next_token_bitmask_par,
)

from engine.errors import GrammarError
from engine.grammar.rewrite import distinct_lark_names

if TYPE_CHECKING:
    from engine.grammar.compile import CompiledSchema
    from engine.model.llama import Model

_tokenizers: weakref.WeakKeyDictionary[Model, llguidance.LLTokenizer] = weakref.WeakKeyDictionary()
_tokenizer_lock = threading.Lock()

# llama.cpp's converter spells bounded repetition (maxLength: 200) as nested optionals,
# deep enough to overflow gbnf_to_lark's recursive parser at Python's default limits.
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION = 200_000
# Held around the process-wide changes gbnf_to_lark makes (see there).
_DEEP_LOCK = threading.Lock()


def tokenizer_for(
    model: Model, should_stop: Callable[[], bool] | None = None
) -> llguidance.LLTokenizer:
    """llguidance's view of the model's vocabulary; built once per model (about 3.5 s on 2
    cores). `should_stop()` returning True ends a build under way with LoadCancelled."""
    with _tokenizer_lock:
        tok = _tokenizers.get(model)
        if tok is None:
            tok = _build_tokenizer(model, should_stop or (lambda: False))
            _tokenizers[model] = tok
        return tok


_PIECE_BYTES = 16 * 1024
_STOP_EVERY = 8192  # tokens between looks at should_stop: about 60 ms of the loop


def _build_tokenizer(model: Model, should_stop: Callable[[], bool]) -> llguidance.LLTokenizer:
    """What llguidance.llamacpp.lltokenizer_from_vocab does, with a look at `should_stop`
    between slices of the vocabulary: its Python loop over 262,144 tokens takes about 2 s,
    and a window closing meanwhile should not wait for it. The trie built after it (about
    1.7 s in llguidance's Rust code, which holds the GIL) cannot be stopped."""
    from engine.model.llama import LoadCancelled  # loads llama.cpp: proven by now

    vocab = model.vocab
    buffer = ctypes.create_string_buffer(_PIECE_BYTES + 1)
    pieces: list[bytes] = []
    for token in range(llama_cpp.llama_vocab_n_tokens(vocab)):
        if token % _STOP_EVERY == 0 and should_stop():
            raise LoadCancelled("the vocabulary was not prepared: the load was stopped")
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, _PIECE_BYTES, 0, True)
        if n < 0:
            raise GrammarError(f"llama.cpp cannot write token {token} ({n})")
        pieces.append(_marked(bytes(buffer[:n]), llama_cpp.llama_vocab_get_attr(vocab, token)))
    tokenize = ctypes.cast(llama_cpp.llama_cpp._lib.llama_tokenize, ctypes.c_void_p).value
    return llguidance.LLTokenizer.from_llamacpp(
        tokens=pieces,
        vocab_ptr=vocab,
        tokenize_fptr=tokenize,
        eos_token=[int(t) for t in model.eog_ids],
        slices=None,
    )


def _marked(piece: bytes, attr: int) -> bytes:
    """llguidance's mark of a special token, as lltokenizer_from_vocab sets it: a leading
    0xFF on control tokens and on user-defined ones written like `<this>`."""
    control = attr & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
    user = attr & llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
    special = control or (user and piece.startswith(b"<") and piece.endswith(b">"))
    return b"\xff" + piece if special else piece


def gbnf_to_lark(gbnf: str) -> str:
    """llguidance's GBNF->Lark translation, run with a stack deep enough for long repeats.

    The recursion limit and the new threads' stack size are process-wide: two translations
    at once (the judge's thread and a run's) each saved the other's raised limit as the one
    to restore, so one could lower it under the other or leave it raised for good. One
    translation at a time sets, runs and restores them."""
    with _DEEP_LOCK:
        return _translate(gbnf)


def _translate(gbnf: str) -> str:
    result: dict[str, object] = {}

    def work() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, _DEEP_RECURSION))
        try:
            result["lark"] = _llg_gbnf_to_lark(gbnf)
        except Exception as exc:  # the translator raises plain exceptions on what it lacks
            result["error"] = exc
        finally:
            sys.setrecursionlimit(old)

    old_size = threading.stack_size(_DEEP_STACK_BYTES)
    try:
        thread = threading.Thread(target=work, name="gbnf-to-lark")
        thread.start()
    finally:
        threading.stack_size(old_size)
    thread.join()
    if "error" in result:
        exc = result["error"]
        raise GrammarError(f"llguidance cannot translate the grammar: {exc}") from None
    return str(result["lark"])


def lark_text(gbnf: str) -> str:
    """The Lark grammar this backend runs for a GBNF (the grammar view shows the same)."""
    return gbnf_to_lark(distinct_lark_names(gbnf))


class LlguidanceBackend:
    name = "llguidance"
    cheap_full_mask = True

    def __init__(self, model: Model, compiled: CompiledSchema) -> None:
        self._n_vocab = model.n_vocab
        tok = tokenizer_for(model)
        grammar = compiled.native or llguidance.LLMatcher.grammar_from_lark(
            lark_text(compiled.gbnf)
        )
        self._matcher = llguidance.LLMatcher(tok, grammar, log_level=0)
        if self._matcher.is_error():
            raise GrammarError("llguidance rejected the grammar", self._matcher.get_error())
        self._bits = allocate_token_bitmask(1, tok.vocab_size)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llg-mask")
        self._pending: Future[None] | None = None
        self._mask: np.ndarray | None = None  # the current state's mask, once unpacked

    def _fill(self) -> None:
        fill_next_token_bitmask(self._matcher, self._bits, 0)

    def prepare(self, likely: np.ndarray | None = None) -> None:
        # The whole mask is cheap, so `likely` is not needed. The mask depends only on the
        # tokens so far, so it is computed while the forward pass runs; both drop the GIL.
        if self._pending is None:
            self._pending = self._pool.submit(self._fill)

    def full_mask(self) -> np.ndarray:
        # One mask per grammar state: a cross-checked step asks for it more than once.
        if self._mask is None:
            if self._pending is None:
                self._fill()
            else:
                self._pending.result()
                self._pending = None
            if self._matcher.is_error():
                raise GrammarError("llguidance failed", self._matcher.get_error())
            bits = np.unpackbits(self._bits[0].view(np.uint8), bitorder="little")
            self._mask = bits[: self._n_vocab].view(bool)
        return self._mask

    def check(self, token_ids: np.ndarray) -> np.ndarray:
        return self.full_mask()[token_ids]

    def accept(self, token: int) -> None:
        self._settle()
        if not self._matcher.consume_token(token):
            raise GrammarError("llguidance refused a token", self._matcher.get_error())

    def reset(self) -> None:
        self._settle()
        self._matcher.reset()

    def count_valid(self, tokens: list[int]) -> int:
        """How many of `tokens`, in order, the grammar takes from here, without computing a
        mask or moving the state: `maskscope check` feeds known texts this way."""
        self._settle()
        return int(self._matcher.validate_tokens(tokens))

    def _settle(self) -> None:
        """Finish any mask in flight and forget it: the grammar state is about to move."""
        if self._pending is not None:
            self._pending.result()
            self._pending = None
        self._mask = None

    def close(self) -> None:
        self._pool.shutdown(wait=True)


_executor: llguidance.LLExecutor | None = None


def fill_masks(backends: Sequence[LlguidanceBackend]) -> None:
    """The next masks of several grammar states (a batch's sequences) in one call, which
    llguidance spreads over its own threads; each backend's full_mask() then returns its own."""
    global _executor
    todo = [b for b in backends if b._mask is None]
    if not todo:
        return
    if _executor is None:
        _executor = llguidance.LLExecutor(os.cpu_count())  # its default leaves a core out
    for b in todo:
        b._settle()
    # Rows as wide as the backends' own: llguidance's vocabulary can outsize the model's.
    bits = allocate_token_bitmask(len(todo), todo[0]._bits.shape[1] * 32)
    fill_next_token_bitmask_par(_executor, [(b._matcher, i) for i, b in enumerate(todo)], bits)
    for i, b in enumerate(todo):
        if b._matcher.is_error():
            raise GrammarError("llguidance failed", b._matcher.get_error())
        unpacked = np.unpackbits(bits[i].view(np.uint8), bitorder="little")
        b._mask = unpacked[: b._n_vocab].view(bool)
