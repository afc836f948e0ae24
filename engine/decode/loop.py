"""The decode loop: a generator of StepRecords that returns a RunResult.

Per step: read the logits, form P = softmax(logits / T) over the full
vocabulary, find the valid set with the mask backend, renormalise over it
(P / sum P(valid)), sample, record, then run the next forward pass. With compute
to spare, the record is made while that forward pass runs, and with llguidance
the next mask too, so the step waits only for an exact draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from engine.decode.gumbel import GumbelSampler
from engine.decode.stepper import Made, Stepper, cross_checker
from engine.errors import GrammarError, MaskscopeError, PatternTimeoutError
from engine.grammar.compile import CompiledSchema
from engine.masking import MaskBackend, make_backend
from engine.masking.unconstrained import AllowAll
from engine.model.llama import Model
from engine.records import FinishReason, RunResult, StepRecord, ValidationIssue
from engine.schema.validate import parse_output, unchecked_formats, validation_issues
from engine.settings import GenerationSettings


def build_prompt(model: Model, prompt: str, settings: GenerationSettings) -> str:
    return model.apply_chat_template(prompt) if settings.chat_template else prompt


def _close(*backends: MaskBackend | None) -> None:
    for backend in backends:
        if backend is not None:
            backend.close()


def _allowed(backend: MaskBackend, mask: np.ndarray | None, token: int) -> bool:
    if mask is not None:
        return bool(mask[token])
    return bool(backend.check(np.array([token], dtype=np.int32))[0])


def _timed_forward(model: Model, token: int) -> float:
    start = time.perf_counter()
    model.eval_token(token)
    return (time.perf_counter() - start) * 1000.0


def generate(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    settings: GenerationSettings,
    should_stop: Callable[[], bool] = lambda: False,
    forced: Sequence[int] = (),
) -> Generator[StepRecord, None, RunResult]:
    """Yield one StepRecord per token; return the RunResult.

    Bad input (grammar, backend, prompt too long) raises MaskscopeError before the
    first step. should_stop() is polled between steps. `forced` gives the tokens of the
    first steps instead of drawing them ("what if" branches: the earlier tokens of a run,
    then the one the user chose); each is checked against the mask, and later steps are
    drawn as usual. settings.constrained False decodes with no mask at all.
    """
    t_start = time.perf_counter()
    if (problem := settings.problem()) is not None:
        raise GrammarError(problem)
    primary = (
        make_backend(settings.backend, model, compiled, should_stop)
        if settings.constrained
        else AllowAll(model.n_vocab)
    )
    secondary = pair = None
    try:
        if settings.cross_check:
            secondary, pair = cross_checker(model, compiled, settings)
        setup_ms = (time.perf_counter() - t_start) * 1000.0
        text = build_prompt(model, prompt, settings)
        tokens = model.tokenize(text, add_special=True)
        model.reset()
        t0 = time.perf_counter()
        model.eval_prompt(tokens)
        prompt_ms = (time.perf_counter() - t0) * 1000.0
    except BaseException:  # bad input before the first step: the run's own cleanup never runs
        _close(primary, secondary)
        raise

    stepper = Stepper(model, primary, secondary, settings, pair)
    rng = np.random.default_rng(settings.seed)
    out = bytearray()
    n_chars = 0
    forward_ms = prompt_ms
    total_forward = total_mask = 0.0
    finish = FinishReason.MAX_TOKENS
    message = ""
    n_tokens = 0
    # With a core to spare (or a GPU doing the forward pass), the step's record is made on a
    # helper thread while this thread runs the next forward pass (ctypes drops the GIL inside
    # llama.cpp), and the backend checks ahead; the record is handed over once that forward
    # pass is done. Running the forward pass here, not on a thread of its own, saves two
    # thread wake-ups a step (measured: 0.99 -> 0.66 ms of step time beside the forward
    # pass). When llama.cpp already uses every core, work beside it only stalls its
    # threads, so then it all runs in turn.
    overlap = model.has_spare_compute
    # With a cheap full mask, the mask is made during the forward pass too: the step then
    # waits only for a Gumbel-max draw over the probable tokens (engine/decode/gumbel.py), and P
    # and the masked view are made with the record.
    drawn_ahead = overlap and primary.cheap_full_mask and secondary is None
    draw = GumbelSampler(model.n_vocab, settings.seed) if drawn_ahead else None
    record_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="record")
    mask_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="next-mask")
    record: Future[StepRecord] | None = None
    next_mask: Future[tuple[np.ndarray, int]] | None = None
    try:
        for step in range(settings.max_tokens):
            if should_stop():
                finish = FinishReason.CANCELLED
                break
            if draw is not None:
                t_mask = time.perf_counter()
                if next_mask is None:  # the first step: nothing ran ahead of it
                    next_mask = mask_pool.submit(stepper.next_mask)
                mask, n_valid = next_mask.result()
                next_mask = None
                mask_ms = (time.perf_counter() - t_mask) * 1000.0
                stepper.dist.scale(model.logits(), settings.temperature)
                view = None  # made with the record
            else:
                stepper.dist.update(model.logits(), settings.temperature)
                view, mask_ms = stepper.masked()
                mask, n_valid = view.full_mask, view.n_valid
            if n_valid == 0:
                finish, message = FinishReason.ERROR, "the grammar allows no token at all here"
                break
            if stepper.grammar_complete(mask, n_valid):
                finish = FinishReason.GRAMMAR_COMPLETE
                break
            if step < len(forced):
                token = forced[step]
                if not _allowed(primary, mask, token):
                    finish = FinishReason.ERROR
                    message = f"the grammar forbids {model.readable(token)} at step {step + 1}"
                    break
            elif draw is not None:
                assert mask is not None
                greedy = settings.temperature <= 0
                token = draw.draw(stepper.dist.scaled, mask, n_valid, greedy)
            else:
                assert view is not None
                u = float(rng.random()) if settings.temperature > 0 else None
                token = stepper.dist.sample(view, u)
            # What needs this step's grammar state is taken before the backends move on.
            disagreement = stepper.disagreement(view) if secondary is not None else None
            full = stepper.full_step(view) if settings.keep_full and view is not None else None
            is_end = model.is_eog(token)
            n_tokens += 1
            total_mask += mask_ms
            if not is_end:
                primary.accept(token)
                if secondary is not None:
                    if secondary.check(np.array([token], dtype=np.int32))[0]:
                        secondary.accept(token)
                    else:
                        message = (
                            f"cross-check stopped at step {step}: {stepper.pair.second_mask} "
                            f"forbids the chosen token {model.readable(token)}"
                        )
                        secondary.close()
                        secondary = stepper.secondary = None
            piece = b"" if is_end else model.piece(token)
            out += piece
            n_chars += sum(1 for b in piece if b & 0xC0 != 0x80)
            made = Made(step, token, mask, n_valid, mask_ms, forward_ms, n_chars, piece)
            if not overlap or is_end:
                yield stepper.finish_step(made, view, disagreement, full)
            else:
                record = record_pool.submit(stepper.finish_step, made, view, disagreement, full)
                if draw is not None:  # next_mask computes the mask itself: no second hand-off
                    next_mask = mask_pool.submit(stepper.next_mask)
                else:
                    primary.prepare(stepper.likely_next())
                    if secondary is not None:
                        secondary.prepare()
            if is_end:
                finish = FinishReason.END_OF_GENERATION
                break
            try:
                forward_ms = _timed_forward(model, token)
            except MaskscopeError:  # (a full context) this step is over: hand its record first
                if record is not None:
                    yield record.result()
                    record = None
                raise
            total_forward += forward_ms
            if record is not None:
                done, record = record, None
                yield done.result()
    except MaskscopeError as exc:
        finish, message = FinishReason.ERROR, str(exc)
    finally:
        for pending in (record, next_mask):  # never free what a thread still works on
            if pending is not None:
                pending.exception()
        record_pool.shutdown(wait=True)
        mask_pool.shutdown(wait=True)
        _close(primary, secondary)

    return finish_run(
        out.decode("utf-8", errors="replace"),
        compiled,
        finish,
        n_tokens,
        message,
        total_ms=(time.perf_counter() - t_start) * 1000.0,
        setup_ms=setup_ms,
        prompt_ms=prompt_ms,
        forward_ms=total_forward,
        mask_ms=total_mask,
        settings=settings,
    )


def _validation_issues(parsed: Any, schema: Any) -> tuple[ValidationIssue, ...]:
    """A pattern too slow to judge leaves the output unjudged: counted invalid, with the
    reason, and the run's records kept, never the whole run lost to an error."""
    try:
        return validation_issues(parsed, schema)
    except PatternTimeoutError as exc:
        return (ValidationIssue(path="$", message=f"not checked: {exc}"),)


def finish_run(
    text: str,
    compiled: CompiledSchema,
    finish: FinishReason,
    n_tokens: int,
    message: str,
    *,
    total_ms: float,
    setup_ms: float,
    prompt_ms: float,
    forward_ms: float,
    mask_ms: float,
    settings: GenerationSettings,
) -> RunResult:
    """Parse and validate the output; a truncated output is never reported as valid."""
    parsed, parse_error = parse_output(text)
    checked = parse_error is None
    errors = _validation_issues(parsed, compiled.schema) if checked else ()
    if finish is FinishReason.MAX_TOKENS:
        message = message or (
            f"the output was cut off at max_tokens={settings.max_tokens}: "
            "it is incomplete, so it counts as invalid"
        )
    elif finish is FinishReason.CANCELLED:
        message = message or f"stopped by the user after {n_tokens} tokens"
    return RunResult(
        text=text,
        finish_reason=finish,
        n_tokens=n_tokens,
        parsed=parsed,
        parse_error=parse_error,
        errors=errors,
        total_ms=total_ms,
        setup_ms=setup_ms,
        prompt_ms=prompt_ms,
        forward_ms=forward_ms,
        mask_ms=mask_ms,
        message=message,
        settings=settings.to_json(),
        unchecked_formats=unchecked_formats(compiled.schema) if checked else (),
    )


def run_to_end(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    settings: GenerationSettings,
    on_step: Callable[[StepRecord], None] | None = None,
) -> RunResult:
    """Drive generate() to completion; the headless convenience the CLI and tests use."""
    gen = generate(model, compiled, prompt, settings)
    while True:
        try:
            record = next(gen)
        except StopIteration as stop:
            return stop.value
        if on_step is not None:
            on_step(record)
