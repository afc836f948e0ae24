"""XGrammar: the masks vLLM and SGLang apply, from XGrammar's own grammar or from GBNF.

XGrammar compiles a grammar against a tokenizer (`TokenizerInfo`) once, then a
`GrammarMatcher` fills a bitmask over the whole vocabulary at each step. The tokenizer is
built from the GGUF's token pieces as raw bytes, as `TokenizerInfo.from_huggingface` builds
it from a byte-level vocabulary; control tokens get no text, which XGrammar reads as special
(never allowed), and the model's end-of-generation tokens are its stop tokens. XGrammar
reads GBNF as its own EBNF (its `compile_grammar` names llama.cpp's grammar README as the
format), with three differences `xgrammar_gbnf` rewrites: its `\\x` escape is greedy, it
does not prune a dead branch (Maskscope's `ws-never`), and it refuses a rule that opens with
an empty alternative (llama.cpp's converter's `space`). Checked over MaskBench dev: all 1,116
grammars Maskscope and llama-cpp-python's port of the converter wrote parsed on it (14 of
Maskscope's did not before).
"""

from __future__ import annotations

import ctypes
import re
import threading
import weakref
from typing import TYPE_CHECKING, Any

import llama_cpp
import numpy as np

from engine.errors import GrammarError
from engine.grammar.compilers.xgrammar.compiler import engine_message, load_xgrammar
from engine.native_stderr import captured_stderr

if TYPE_CHECKING:
    from engine.grammar.compile import CompiledSchema
    from engine.model.llama import Model

_PIECE_BYTES = 16 * 1024
# Maskscope's `ws-break` recurses through `ws-never`, a rule that matches nothing, to keep
# llguidance's lexer small (engine/grammar/compilers/maskscope/rules.py). XGrammar does not prune a
# path that can never finish: it let the NUL byte through, after which nothing was allowed.
# XGrammar has no such lexer to keep small, so it gets the rule's one live branch.
_WS_BREAK = re.compile(r"^ws-break ::= .*$", re.MULTILINE)
# GBNF's `\xHH` is two hex digits; XGrammar's `\x` takes as many as follow, so `"\x41B"` was
# U+041B to it, not "AB", and `[\x2D0-9]` a range from U+02D0 down to "9", which it refused.
# `\u00HH` means the same to both. An escaped backslash (`\\x41`) is left alone.
_HEX_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\x([0-9A-Fa-f]{2})")
# llama.cpp's converter opens its `space` rule with an empty alternative
# (`space ::= | " " | ...`), which GBNF allows and XGrammar's parser refuses ("Expect
# element"); `""` is the same empty string to both.
_EMPTY_FIRST = re.compile(r"^(\S+ ::= )\|", re.MULTILINE)
_compilers: weakref.WeakKeyDictionary[Model, Any] = weakref.WeakKeyDictionary()
_compiler_lock = threading.Lock()


def compiler_for(model: Model) -> Any:
    """XGrammar's GrammarCompiler over the model's vocabulary; built once per model (about
    0.5 s for 262,144 tokens). It caches the grammars it compiled, as vLLM's does."""
    with _compiler_lock:
        found = _compilers.get(model)
        if found is None:
            xgr = load_xgrammar()
            info = xgr.TokenizerInfo(
                _pieces(model),
                xgr.VocabType.RAW,
                vocab_size=model.n_vocab,
                stop_token_ids=[int(t) for t in model.eog_ids],
            )
            found = _compilers[model] = xgr.GrammarCompiler(info, max_threads=2)
        return found


def _pieces(model: Model) -> list[bytes]:
    vocab = model.vocab
    buffer = ctypes.create_string_buffer(_PIECE_BYTES + 1)
    pieces: list[bytes] = []
    for token in range(model.n_vocab):
        if llama_cpp.llama_vocab_get_attr(vocab, token) & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL:
            pieces.append(b"")
            continue
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, _PIECE_BYTES, 0, True)
        if n < 0:
            raise GrammarError(f"llama.cpp cannot write token {token} ({n})")
        pieces.append(bytes(buffer[:n]))
    return pieces


def xgrammar_gbnf(gbnf: str) -> str:
    """The GBNF as the xgrammar backend runs it."""
    gbnf = _EMPTY_FIRST.sub(r'\1"" |', _WS_BREAK.sub('ws-break ::= ""', gbnf))
    return _HEX_ESCAPE.sub(r"\1\\u00\2", gbnf)


def _runnable(compiled: CompiledSchema) -> str:
    return xgrammar_gbnf(compiled.gbnf) if compiled.kind == "gbnf" else compiled.grammar_text


class XGrammarBackend:
    name = "xgrammar"
    cheap_full_mask = True

    def __init__(self, model: Model, compiled: CompiledSchema) -> None:
        xgr = load_xgrammar()
        self._n_vocab = model.n_vocab
        try:
            with captured_stderr():  # its warnings on a pattern's lookarounds, printed again
                grammar = compiler_for(model).compile_grammar(_runnable(compiled))
        except Exception as exc:  # XGrammar's parser raises RuntimeError on what it refuses
            raise GrammarError(f"XGrammar refuses the grammar: {engine_message(exc)}") from None
        self._matcher = xgr.GrammarMatcher(grammar)
        # A NumPy array takes the bitmask through DLPack, as a CPU torch tensor would.
        self._bits = np.zeros((1, (self._n_vocab + 31) // 32), dtype=np.int32)
        self._mask: np.ndarray | None = None

    def prepare(self, likely: np.ndarray | None = None) -> None:
        """Nothing ahead: a mask takes microseconds."""

    def full_mask(self) -> np.ndarray:
        if self._mask is None:
            self._matcher.fill_next_token_bitmask(self._bits, 0)
            bits = np.unpackbits(self._bits[0].view(np.uint8), bitorder="little")
            self._mask = bits[: self._n_vocab].view(bool)
        return self._mask

    def check(self, token_ids: np.ndarray) -> np.ndarray:
        return self.full_mask()[token_ids]

    def accept(self, token: int) -> None:
        self._mask = None
        if not self._matcher.accept_token(int(token)):
            raise GrammarError(f"XGrammar refused token {token}")

    def reset(self) -> None:
        self._mask = None
        self._matcher.reset()

    def close(self) -> None:
        """XGrammar's objects free themselves."""
