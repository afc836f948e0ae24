"""Parallel sequences: P samples of one prompt decoded together, one forward pass a step.

Each sequence is a run of its own: its own seed, grammar state (mask backend), Distribution,
sampler and full StepRecords, made exactly as a single run makes them (both through
engine/decode/stepper.py), and each leaves the batch when it finishes. What the sequences
share is the prompt's KV cells and the forward pass, where the model's big output layer is
read once for all of them; with llguidance their masks are computed in one call too.

Up to 3 rows a step, a batch's logits are bit for bit a single run's, and so are its runs.
From 4 rows on, llama.cpp's CPU kernels for matrix-matrix products sum in another order
than the matrix-vector ones a single run uses, and through the layers the logits move
(measured on the default model: by up to ~0.9, valid mass by up to 0.06): a drawn token
then differs where the draw falls near a boundary that moved.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from engine.decode.loop import build_prompt, finish_run
from engine.decode.stepper import Stepper, drawn_ahead
from engine.errors import GrammarError, MaskscopeError, PromptError
from engine.grammar.compile import CompiledSchema
from engine.masking import MaskBackend, make_backend
from engine.masking.unconstrained import AllowAll
from engine.model.batch import BatchContext
from engine.model.llama import Model
from engine.records import FinishReason, RunResult, StepRecord
from engine.settings import GenerationSettings


@dataclass(frozen=True, slots=True)
class SequenceRun:
    """One sequence of a batch: its seed, its result and every step's record."""

    seed: int
    result: RunResult
    records: tuple[StepRecord, ...]


@dataclass(slots=True)
class _Sequence:
    """A live sequence's own state between steps, beside its Stepper's."""

    seq_id: int
    settings: GenerationSettings
    stepper: Stepper
    records: list[StepRecord] = field(default_factory=list)
    forward_ms: float = 0.0
    finish: FinishReason | None = None
    message: str = ""
    end_ms: float = 0.0

    @property
    def backend(self) -> MaskBackend:
        return self.stepper.primary


def generate_batch(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    settings: GenerationSettings,
    seeds: Sequence[int],
    should_stop: Callable[[], bool] = lambda: False,
    on_step: Callable[[int, StepRecord], None] | None = None,
) -> list[SequenceRun]:
    """Run one sequence per seed, all in one batch; results in the order of `seeds`.

    Bad input raises MaskscopeError before the first step, as generate() does. `on_step`
    gets (index into seeds, record) as each record is made; should_stop() is polled between
    steps and cancels every sequence still running.
    """
    t_start = time.perf_counter()
    _refuse(settings, seeds)
    seqs: list[_Sequence] = []
    try:
        for i, seed in enumerate(seeds):  # one at a time, so a failure closes those made
            seqs.append(_new_sequence(i, model, compiled, settings, seed, should_stop))
        setup_ms = (time.perf_counter() - t_start) * 1000.0
        tokens = model.tokenize(build_prompt(model, prompt, settings), add_special=True)
        if len(tokens) + 1 > model.n_ctx:  # what a single run refuses, a batch refuses too
            raise PromptError(
                f"the prompt has {len(tokens)} tokens, but the context holds {model.n_ctx} "
                "with room for the output: shorten the prompt or raise n_ctx (--n-ctx)"
            )
        ctx = BatchContext(model, len(seeds), len(tokens), settings.max_tokens)
    except BaseException:
        for s in seqs:
            s.backend.close()
        raise
    workers = min(len(seqs), os.cpu_count() or 1)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="batch-seq") if workers > 1 else None
    try:
        t0 = time.perf_counter()
        ctx.start(tokens)
        prompt_ms = (time.perf_counter() - t0) * 1000.0
        _decode_all(model, ctx, seqs, len(tokens), prompt_ms, t_start, should_stop, on_step, pool)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        ctx.close()
        for s in seqs:
            s.backend.close()
    return [_finished(s, seeds[s.seq_id], compiled, setup_ms, prompt_ms) for s in seqs]


def _refuse(settings: GenerationSettings, seeds: Sequence[int]) -> None:
    """What a batch cannot run, refused before anything is made."""
    if (problem := settings.problem()) is not None:
        raise GrammarError(problem)
    if settings.cross_check:
        raise GrammarError("a batch of sequences does not cross-check: run them one at a time")
    if not seeds:
        raise PromptError("a batch needs at least one seed")


def _finished(
    s: _Sequence, seed: int, compiled: CompiledSchema, setup_ms: float, prompt_ms: float
) -> SequenceRun:
    result = finish_run(
        s.stepper.text(),
        compiled,
        s.finish or FinishReason.MAX_TOKENS,
        s.stepper.n_tokens,
        s.message,
        total_ms=s.end_ms,
        setup_ms=setup_ms,
        prompt_ms=prompt_ms,
        forward_ms=s.forward_ms,
        mask_ms=s.stepper.mask_ms,
        settings=s.settings,
    )
    return SequenceRun(seed, result, tuple(s.records))


def _new_sequence(
    seq_id: int,
    model: Model,
    compiled: CompiledSchema,
    settings: GenerationSettings,
    seed: int,
    should_stop: Callable[[], bool],
) -> _Sequence:
    own = dataclasses.replace(settings, seed=seed)
    backend = (
        make_backend(own.backend, model, compiled, should_stop)
        if own.constrained
        else AllowAll(model.n_vocab)
    )
    # The Stepper draws as generate() would for this seed on this machine.
    draw = drawn_ahead(model, backend, None, own)
    stepper = Stepper(model, backend, None, own, draw=draw)
    return _Sequence(seq_id=seq_id, settings=own, stepper=stepper)


def _decode_all(
    model: Model,
    ctx: BatchContext,
    seqs: list[_Sequence],
    n_prompt: int,
    prompt_ms: float,
    t_start: float,
    should_stop: Callable[[], bool],
    on_step: Callable[[int, StepRecord], None] | None,
    pool: ThreadPoolExecutor | None,
) -> None:
    live = list(seqs)
    rows: dict[int, int] = {}  # seq_id -> its row in the last forward pass
    forward_ms = prompt_ms
    max_tokens = seqs[0].settings.max_tokens
    for step in range(max_tokens):
        if should_stop():
            _end(live, FinishReason.CANCELLED, "", t_start)
            return
        shared_mask_ms = _fill_masks(live)
        logits = [ctx.prompt_logits() if step == 0 else ctx.logits(rows[s.seq_id]) for s in live]
        one = functools.partial(_step, step, forward_ms, shared_mask_ms, t_start)
        # llama.cpp is idle between forward passes, so the sequences' own work (softmax,
        # view, record: NumPy drops the GIL) shares every core; each touches only its own.
        tokens = list(map(one, live, logits) if pool is None else pool.map(one, live, logits))
        chosen: list[tuple[_Sequence, int]] = []
        for s, token in zip(live, tokens, strict=True):
            if on_step is not None and s.records and s.records[-1].step == step:
                on_step(s.seq_id, s.records[-1])
            if token is not None:
                chosen.append((s, token))
        live = [s for s, _ in chosen]
        if not live or step == max_tokens - 1:  # nothing left to read a next step's logits
            break
        if n_prompt + step + 1 > model.n_ctx:  # where a single run's context is full, too
            _end(live, FinishReason.ERROR, f"the context of {model.n_ctx} tokens is full", t_start)
            return
        t = time.perf_counter()
        try:
            ctx.step([s.seq_id for s in live], [tok for _, tok in chosen], [step] * len(live))
        except MaskscopeError as exc:
            _end(live, FinishReason.ERROR, str(exc), t_start)
            return
        forward_ms = (time.perf_counter() - t) * 1000.0
        rows = {s.seq_id: i for i, s in enumerate(live)}
        for s in live:
            s.forward_ms += forward_ms
    _end(live, FinishReason.MAX_TOKENS, "", t_start)


def _fill_masks(live: list[_Sequence]) -> float:
    """Every llguidance sequence's mask in one call; its time, shared out per sequence."""
    from engine.masking.llguidance import LlguidanceBackend, fill_masks

    backends = [s.backend for s in live if isinstance(s.backend, LlguidanceBackend)]
    if len(backends) < 2:
        return 0.0
    start = time.perf_counter()
    fill_masks(backends)
    return (time.perf_counter() - start) * 1000.0 / len(backends)


def _step(
    step: int,
    forward_ms: float,
    shared_mask_ms: float,
    t_start: float,
    s: _Sequence,
    logits: np.ndarray,
) -> int | None:
    """One sequence's step, as generate() makes it; the token to feed next, or None once
    the sequence has finished."""
    try:
        decided = s.stepper.step(step, logits, forward_ms, shared_mask_ms=shared_mask_ms)
    except MaskscopeError as exc:  # the backend refused to accept the drawn token
        return _finish(s, FinishReason.ERROR, str(exc), t_start)
    if decided.made is None:
        reason = decided.finish or FinishReason.ERROR
        return _finish(s, reason, decided.message, t_start)
    s.records.append(s.stepper.record(decided))
    if decided.finish is not None:
        return _finish(s, decided.finish, "", t_start)
    return decided.made.token


def _finish(s: _Sequence, reason: FinishReason, message: str, t_start: float) -> None:
    s.finish, s.message = reason, message
    s.end_ms = (time.perf_counter() - t_start) * 1000.0
    return None


def _end(live: list[_Sequence], reason: FinishReason, message: str, t_start: float) -> None:
    for s in live:
        _finish(s, reason, message, t_start)
