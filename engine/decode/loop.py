"""The decode loop: a generator of StepRecords that returns a RunResult.

Per step: read the logits, form P = softmax(logits / T) over the full
vocabulary, find the valid set with the mask backend, renormalise over it
(P / sum P(valid)), sample, record, then run the next forward pass. The step is
engine/decode/stepper.py's, as a batch's sequences make it; with compute to spare, the
record is made while the next forward pass runs, and with a cheap full mask the next
mask and noise too (engine/decode/overlap.py), so the step waits only for a Gumbel-max draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from engine.decode.overlap import Overlap
from engine.decode.stepper import Stepper, cross_checker, drawn_ahead
from engine.errors import GrammarError, MaskscopeError, PatternTimeoutError
from engine.grammar.compile import CompiledSchema
from engine.masking import make_backend
from engine.masking.unconstrained import AllowAll
from engine.model.llama import Model
from engine.records import FinishReason, RunResult, StepRecord, ValidationIssue
from engine.schema.validate import parse_output, unchecked_formats, validation_issues
from engine.settings import GenerationSettings


def build_prompt(model: Model, prompt: str, settings: GenerationSettings) -> str:
    return model.apply_chat_template(prompt) if settings.chat_template else prompt


def _timed_forward(model: Model, token: int) -> float:
    start = time.perf_counter()
    model.eval_token(token)
    return (time.perf_counter() - start) * 1000.0


@dataclass(slots=True)
class _Started:
    """A run set up to its first step: its Stepper, and what the setup cost."""

    stepper: Stepper
    setup_ms: float
    prompt_ms: float


def _start(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    settings: GenerationSettings,
    should_stop: Callable[[], bool],
    cross: CompiledSchema | None,
) -> _Started:
    """Backends made and the prompt read; bad input raises here, its backends closed."""
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
            secondary, pair = cross_checker(model, compiled, settings, cross)
        setup_ms = (time.perf_counter() - t_start) * 1000.0
        tokens = model.tokenize(build_prompt(model, prompt, settings), add_special=True)
        model.reset()
        t0 = time.perf_counter()
        model.eval_prompt(tokens)
    except BaseException:  # bad input before the first step: the run's own cleanup never runs
        for backend in (primary, secondary):
            if backend is not None:
                backend.close()
        raise
    draw = drawn_ahead(model, primary, secondary, settings)
    stepper = Stepper(model, primary, secondary, settings, pair, draw)
    return _Started(stepper, setup_ms, (time.perf_counter() - t0) * 1000.0)


def generate(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    settings: GenerationSettings,
    should_stop: Callable[[], bool] = lambda: False,
    forced: Sequence[int] = (),
    cross: CompiledSchema | None = None,
) -> Generator[StepRecord, None, RunResult]:
    """Yield one StepRecord per token; return the RunResult. Bad input raises
    MaskscopeError before the first step; should_stop() is polled between steps. `forced`
    gives the first steps' tokens instead of draws ("what if" branches), each checked
    against the mask. `cross` is settings.cross_check_compiler's grammar (cross_grammar)."""
    t_start = time.perf_counter()
    run = _start(model, compiled, prompt, settings, should_stop, cross)
    stepper = run.stepper
    beside = Overlap(stepper, model.has_spare_compute)
    ahead = beside.ahead if stepper.draw is not None else None
    forward_ms, total_forward = run.prompt_ms, 0.0
    finish, message = FinishReason.MAX_TOKENS, ""
    try:
        for step in range(settings.max_tokens):
            if should_stop():
                finish = FinishReason.CANCELLED
                break
            force = forced[step] if step < len(forced) else None
            decided = stepper.step(step, model.logits(), forward_ms, ahead, force)
            if decided.made is None:
                finish, message = decided.finish or finish, decided.message
                break
            if (record := beside.hand_off(decided)) is not None:
                yield record
            if decided.finish is not None:
                finish = decided.finish
                break
            try:
                forward_ms = _timed_forward(model, decided.made.token)
            except MaskscopeError:  # (a full context) this step is over: hand its record first
                if (record := beside.collect()) is not None:
                    yield record
                raise
            total_forward += forward_ms
            if (record := beside.collect()) is not None:
                yield record
    except MaskscopeError as exc:
        finish, message = FinishReason.ERROR, str(exc)
    finally:
        beside.close()
        stepper.close()
    total_ms = (time.perf_counter() - t_start) * 1000.0
    return _result(run, compiled, finish, message, total_ms, total_forward)


def _result(
    run: _Started,
    compiled: CompiledSchema,
    finish: FinishReason,
    message: str,
    total_ms: float,
    forward_ms: float,
) -> RunResult:
    stepper = run.stepper
    return finish_run(
        stepper.text(),
        compiled,
        finish,
        stepper.n_tokens,
        message or stepper.note,  # a cross-check that stopped says so, unless more is said
        total_ms=total_ms,
        setup_ms=run.setup_ms,
        prompt_ms=run.prompt_ms,
        forward_ms=forward_ms,
        mask_ms=stepper.mask_ms,
        settings=stepper.settings,
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
