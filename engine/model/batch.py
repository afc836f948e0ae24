"""Several sequences in one llama.cpp context: one forward pass serves them all.

A BatchContext is a second llama context on a loaded Model's weights, made for `n_seq`
sequences (llama.cpp's `n_seq_max`). The shared prompt is evaluated once, in sequence 0,
and its KV cells are shared with every other sequence (`llama_memory_seq_cp` only tags the
cells in a unified cache). Each step then decodes one token per live sequence, each with its
own `seq_id` and position, and every row's logits are read.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence

import llama_cpp
import numpy as np

from engine.errors import ModelLoadError, PromptError
from engine.model import native_log
from engine.model.llama import Model, _root_cause

_N_BATCH = 512


class BatchContext:
    """A context for `n_seq` sequences that share one prompt, each up to `max_new` tokens."""

    def __init__(self, model: Model, n_seq: int, n_prompt: int, max_new: int) -> None:
        if n_seq < 1:
            raise PromptError(f"a batch needs at least one sequence, not {n_seq}")
        self.model = model
        self.n_seq = n_seq
        # The unified cache holds the prompt once and each sequence's own tokens beside it.
        # A finished sequence keeps its cells: freed, they would take the next tokens of
        # the others out of order, and attention would sum in another order than a single
        # run's (measured: logits then differ in the last bits).
        self.n_ctx = n_prompt + n_seq * (max_new + 1)
        n_threads = model.info.n_threads
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = self.n_ctx
        cparams.n_seq_max = n_seq
        cparams.kv_unified = True
        cparams.n_batch = cparams.n_ubatch = max(min(_N_BATCH, self.n_ctx), n_seq)
        cparams.n_threads = n_threads
        cparams.n_threads_batch = max(n_threads, os.cpu_count() or 1)
        cparams.no_perf = True
        with native_log.capture() as captured:
            ctx = llama_cpp.llama_init_from_model(model.handle, cparams)
        if not ctx:
            reason = _root_cause(captured.errors) or "context creation failed"
            raise ModelLoadError(f"cannot create a context for {n_seq} sequences: {reason}")
        self._ctx = ctx
        self._mem = llama_cpp.llama_get_memory(ctx)
        self.n_batch = int(llama_cpp.llama_n_batch(ctx))
        self._batch = llama_cpp.llama_batch_init(n_seq, 0, 1)
        self._n_prompt = 0
        self._n_rows = 0
        self._views: dict[int, np.ndarray] = {}  # row address -> zero-copy logits view

    def start(self, tokens: Sequence[int]) -> None:
        """Forget every sequence, evaluate the prompt once and give it to all of them."""
        if not tokens:
            raise PromptError("the prompt is empty, and this model adds no start token")
        if len(tokens) + self.n_seq > self.n_ctx:
            raise PromptError(
                f"the prompt has {len(tokens)} tokens, more than this batch's context holds"
            )
        llama_cpp.llama_memory_clear(self._mem, True)
        for start in range(0, len(tokens), self.n_batch):
            chunk = list(tokens[start : start + self.n_batch])
            arr = (llama_cpp.llama_token * len(chunk))(*chunk)
            self._decode(llama_cpp.llama_batch_get_one(arr, len(chunk)))
        for seq in range(1, self.n_seq):
            llama_cpp.llama_memory_seq_cp(self._mem, 0, seq, -1, -1)
        self._n_prompt = len(tokens)
        self._n_rows = 0

    def prompt_logits(self) -> np.ndarray:
        """The logits after the prompt: every sequence's first step reads these."""
        return self._row(-1)

    def step(self, seqs: Sequence[int], tokens: Sequence[int], positions: Sequence[int]) -> None:
        """One forward pass: token i goes to sequence seqs[i] at positions[i] (counted from
        the end of the prompt); afterwards logits(i) is row i's."""
        n = len(seqs)
        if not 0 < n <= self.n_seq:
            raise PromptError(f"a step takes 1 to {self.n_seq} tokens, not {n}")
        b = self._batch
        for i, (seq, token, pos) in enumerate(zip(seqs, tokens, positions, strict=True)):
            b.token[i] = token
            b.pos[i] = self._n_prompt + pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = 1
        b.n_tokens = n
        self._decode(b)
        self._n_rows = n

    def logits(self, row: int) -> np.ndarray:
        """Zero-copy view of row `row` of the last step; valid until the next decode."""
        if not 0 <= row < self._n_rows:
            raise IndexError(f"row {row} of a step with {self._n_rows} rows")
        return self._row(row)

    def _row(self, row: int) -> np.ndarray:
        ptr = llama_cpp.llama_get_logits_ith(self._ctx, row)
        address = ctypes.cast(ptr, ctypes.c_void_p).value
        view = self._views.get(address)
        if view is None:  # building a ctypes array type costs ~0.3 ms: once per address
            buffer = (ctypes.c_float * self.model.n_vocab).from_address(address)
            view = self._views[address] = np.frombuffer(buffer, dtype=np.float32)
        return view

    def _decode(self, batch: llama_cpp.llama_batch) -> None:
        rc = llama_cpp.llama_decode(self._ctx, batch)
        if rc == 1:
            raise ModelLoadError(f"the batch's context of {self.n_ctx} tokens is full")
        if rc != 0:
            raise ModelLoadError(f"llama_decode failed with code {rc}")

    def close(self) -> None:
        if getattr(self, "_ctx", None):
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self._ctx)
            self._ctx = None
            self._views.clear()

    def __enter__(self) -> BatchContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
