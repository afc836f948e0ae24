"""One backend's per-step times through `engine.decode.loop.generate`, as the bench measures
them everywhere: the wall time between two yielded StepRecords, split into the forward
pass, the mask and everything else; step 0 (the prompt's forward pass) left out."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.decode.loop import generate
from engine.grammar.compile import CompiledSchema
from engine.model.llama import Model
from engine.settings import GenerationSettings

TEMPERATURE = 0.7
SEED = 0


@dataclass(slots=True)
class BackendSamples:
    """Per-step times (ms) of one backend over all workloads."""

    forward: list[float] = field(default_factory=list)
    mask: list[float] = field(default_factory=list)
    other: list[float] = field(default_factory=list)
    step: list[float] = field(default_factory=list)
    compile: list[float] = field(default_factory=list)


def constrained_run(
    model: Model,
    compiled: CompiledSchema,
    prompt: str,
    backend: str,
    steps: int,
    into: BackendSamples,
) -> None:
    settings = GenerationSettings(
        max_tokens=steps, temperature=TEMPERATURE, seed=SEED, backend=backend
    )
    last: float | None = None
    for record in generate(model, compiled, prompt, settings):
        now = time.perf_counter()
        if last is not None:
            wall = (now - last) * 1000.0
            into.step.append(wall)
            into.forward.append(record.forward_ms)
            into.mask.append(record.mask_ms)
            into.other.append(wall - record.forward_ms - record.mask_ms)
        last = now


def pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def rate(count: int, seconds: float | None) -> float | None:
    """Per second; None where no time was measured."""
    return count / seconds if seconds is not None and seconds > 0 else None


def backend_summary(s: BackendSamples) -> dict[str, Any]:
    """Medians and ratios of one backend's steps. The overhead pairs each step with its own
    forward pass: median(step - forward) / median(forward). On a shared machine the forward
    pass moves by tens of percent between steps, and a difference of the two medians took
    that noise for overhead (the fast model with a free core read 0.12 and 0.26 in two runs
    of the same code, its per-step overhead 0.18 and 0.21 ms)."""
    step, forward = pct(s.step, 50), pct(s.forward, 50)
    beside = pct([w - f for w, f in zip(s.step, s.forward, strict=True)], 50)
    return {
        "mask_ms_p50": pct(s.mask, 50),
        "mask_ms_p99": pct(s.mask, 99),
        "other_ms_p50": pct(s.other, 50),
        "forward_ms_p50": forward,
        "step_ms_p50": step,
        "overhead_ratio": beside / forward if beside is not None and forward else None,
        "tokens_per_s": rate(len(s.step), sum(s.step) / 1000.0),
        "compile_ms_p50": pct(s.compile, 50),
        "n_steps": len(s.step),
    }
