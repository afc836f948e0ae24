"""llama.cpp's own grammar sampler: the masks production llama.cpp would apply."""

from __future__ import annotations

import ctypes
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import llama_cpp
import numpy as np

from engine.errors import GrammarError
from engine.grammar.judge.llama_parser import ROOT
from engine.grammar.judge.verdicts import judge_gbnf
from engine.masking.utf8 import Utf8Guard, table_for
from engine.model import native_log

if TYPE_CHECKING:
    from engine.grammar.compile import CompiledSchema
    from engine.model.llama import Model

# Same layout as llama_token_data {int32 id; float logit; float p}, so NumPy can fill it.
_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])
# A check of many tokens is split across cores: llama.cpp's grammar check only reads the
# grammar state, and ctypes drops the GIL. Smaller parts cost more to hand over than they save.
_MIN_PART = 2048
_MAX_PARTS = 8


class LlamaCppBackend:
    name = "llamacpp"
    cheap_full_mask = False  # about 35 ms over a 262k vocabulary on one core

    def __init__(self, model: Model, compiled: CompiledSchema) -> None:
        self._model = model
        # A grammar that crashed llama.cpp in the judge's child would crash this process too.
        # The verdict is cached: after compile_schema judged the grammar, this costs a hash.
        judge_gbnf(compiled.gbnf)
        with native_log.capture() as captured:
            sampler = llama_cpp.llama_sampler_init_grammar(
                model.vocab, compiled.gbnf.encode(), ROOT.encode()
            )
        if not sampler:
            detail = captured.errors or "llama.cpp rejected the grammar without saying why"
            raise GrammarError("llama.cpp rejected the grammar", detail)
        self._sampler = sampler
        n = model.n_vocab
        self._buf = (llama_cpp.llama_token_data * n)()
        self._view = np.frombuffer(self._buf, dtype=_TOKEN_DATA)
        self._n_parts = max(1, min(os.cpu_count() or 1, _MAX_PARTS))
        self._parts = [llama_cpp.llama_token_data_array() for _ in range(self._n_parts)]
        self._split_pool = (
            ThreadPoolExecutor(self._n_parts - 1, thread_name_prefix="llamacpp-check")
            if self._n_parts > 1
            else None
        )
        self._all_ids = np.arange(n, dtype=np.int32)
        # Verdicts checked ahead for the current grammar state: 1 valid, 0 not, -1 unknown.
        self._known = np.full(n, -1, dtype=np.int8)
        self._known_current = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp-mask")
        self._pending: Future[None] | None = None
        # llama.cpp's check lets overlong UTF-8 through (engine/masking/utf8.py).
        self._utf8 = Utf8Guard(table_for(model))

    def prepare(self, likely: np.ndarray | None = None) -> None:
        """Check `likely` tokens (last step's probable head) while the forward pass runs.

        The next head mostly repeats the last one, so after the forward pass only the
        newcomers need llama.cpp's check. Every verdict is still llama.cpp's own.
        """
        if likely is not None and len(likely) and self._pending is None:
            self._pending = self._pool.submit(self._check_ahead, likely.copy())

    def _check_ahead(self, ids: np.ndarray) -> None:
        ok = self._check_now(ids)
        self._known.fill(-1)
        self._known[ids] = ok

    def _settle(self) -> None:
        if self._pending is not None:
            self._pending.result()
            self._pending = None
            self._known_current = True

    def check(self, token_ids: np.ndarray) -> np.ndarray:
        return self._llama_check(token_ids) & self._utf8.allowed(token_ids)

    def _llama_check(self, token_ids: np.ndarray) -> np.ndarray:
        self._settle()
        if not self._known_current:
            return self._check_now(token_ids)
        verdict = self._known[token_ids]
        unknown = verdict < 0
        if unknown.any():
            verdict[unknown] = self._check_now(token_ids[unknown])
        return verdict == 1

    def _check_now(self, token_ids: np.ndarray) -> np.ndarray:
        n = len(token_ids)
        view = self._view[:n]
        view["id"] = token_ids
        view["logit"] = 0.0
        n_parts = max(1, min(self._n_parts, n // _MIN_PART))
        bounds = np.linspace(0, n, n_parts + 1).astype(int)
        spans = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
        helpers = []
        if self._split_pool is not None:
            helpers = [
                self._split_pool.submit(self._apply, i, lo, hi)
                for i, (lo, hi) in enumerate(spans[1:], start=1)
            ]
        self._apply(0, *spans[0])
        for helper in helpers:
            helper.result()
        # The sampler sets the logit of each rejected token to -inf.
        return view["logit"] == 0.0

    def _apply(self, part: int, lo: int, hi: int) -> None:
        """llama.cpp's grammar check over buffer entries [lo, hi)."""
        if hi <= lo:
            return
        array = self._parts[part]
        array.data = ctypes.cast(
            ctypes.byref(self._buf, lo * ctypes.sizeof(llama_cpp.llama_token_data)),
            llama_cpp.llama_token_data_p,
        )
        array.size = hi - lo
        array.selected = -1
        array.sorted = False
        llama_cpp.llama_sampler_apply(self._sampler, ctypes.byref(array))

    def full_mask(self) -> np.ndarray:
        return self.check(self._all_ids)

    def accept(self, token: int) -> None:
        # llama.cpp aborts the process on a token its grammar rejects; callers only pass
        # tokens that check() allowed.
        self._settle()
        self._known_current = False
        llama_cpp.llama_sampler_accept(self._sampler, token)
        self._utf8.accept(token)

    def reset(self) -> None:
        self._settle()
        self._known_current = False
        llama_cpp.llama_sampler_reset(self._sampler)
        self._utf8.reset()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        if self._split_pool is not None:
            self._split_pool.shutdown(wait=True)
        if self._sampler:
            llama_cpp.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:
        # An __init__ that raised (a refused grammar) left nothing to close, and a __del__
        # that raises during garbage collection can upset the interpreter (ast.parse fails).
        if hasattr(self, "_pending"):
            self.close()
