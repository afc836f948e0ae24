"""Running a suite: every case × N samples on the real model, one after another.

Sample i of a case decodes with the suite's seed + i, so a suite is reproducible and a
sample's seed says how to replay it. A finished sample is kept in the run cache
(engine/suite/cache.py) and an unchanged one is read back instead of decoded. A cancel
(should_stop) ends the sample in progress between two steps; the samples finished so far
are kept, in the cache too, so running the suite again resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.decode.loop import generate
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.model.llama import Model
from engine.records import FinishReason, RunResult, StepRecord
from engine.runs.provenance import model_digest, provenance_of
from engine.runs.saved import SavedRun
from engine.settings import GenerationSettings
from engine.suite.cache import RunCache, sample_key
from engine.suite.format import Case, Suite
from engine.suite.metrics import Sample, sample_from_run
from engine.suite.template import render_prompt


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a suite run is, after each sample."""

    done: int
    total: int
    cached: int  # of `done`, read back from the cache
    elapsed_s: float
    sample: Sample

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the pace of the decoded samples; None before the first."""
        decoded = self.done - self.cached
        if decoded <= 0:
            return None
        return self.elapsed_s / decoded * (self.total - self.done)


@dataclass(frozen=True, slots=True)
class SuiteRun:
    samples: tuple[Sample, ...]
    runs: tuple[SavedRun, ...]  # each sample's run, to open in the window
    cancelled: bool
    cached: int
    wall_s: float
    planned: int  # samples the run was to make


@dataclass(frozen=True, slots=True)
class _Planned:
    case: Case
    index: int
    prompt: str
    settings: GenerationSettings


def _plan(suite: Suite, samples: int, base: GenerationSettings) -> Iterator[_Planned]:
    for case in suite.cases:
        prompt = render_prompt(suite.prompt, case.vars)
        for i in range(samples):
            yield _Planned(case, i, prompt, dataclasses.replace(base, seed=base.seed + i))


def _decode(
    model: Model,
    compiled: CompiledSchema,
    planned: _Planned,
    should_stop: Callable[[], bool],
) -> tuple[RunResult, tuple[StepRecord, ...]]:
    records: list[StepRecord] = []
    gen = generate(model, compiled, planned.prompt, planned.settings, should_stop)
    while True:
        try:
            records.append(next(gen))
        except StopIteration as done:
            return done.value, tuple(records)


def run_suite(
    model: Model,
    suite: Suite,
    *,
    samples: int | None = None,
    cache: RunCache | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[Progress], None] | None = None,
) -> SuiteRun:
    """Run every case `samples` times (the suite's own count by default). Bad input (the
    schema, a prompt variable, the settings) raises MaskscopeError before any decoding."""
    base = suite.settings()
    planned = list(_plan(suite, samples or suite.samples, base))
    compiled = compile_schema(suite.schema_text, base.compiler)
    model_sha = model_digest(model.info.path)[1]
    start = time.perf_counter()
    done: list[Sample] = []
    runs: list[SavedRun] = []
    cached = 0
    for plan in planned:
        key = sample_key(model_sha, suite.schema_text, plan.prompt, plan.settings)
        run = cache.get(key) if cache is not None else None
        if run is not None:
            cached += 1
        else:
            if should_stop():
                break
            result, records = _decode(model, compiled, plan, should_stop)
            made = provenance_of(model.info.path, plan.settings, model.n_vocab)
            run = SavedRun(suite.schema_text, plan.prompt, model.info.name, records, result, made)
            if cache is not None and result.finish_reason is not FinishReason.CANCELLED:
                cache.put(key, run)
        sample = sample_from_run(
            plan.case.id,
            plan.index,
            plan.settings.seed,
            run.result,
            run.records,
            expectations=plan.case.expected,
        )
        done.append(sample)
        runs.append(run)
        if on_progress is not None:
            elapsed = time.perf_counter() - start
            on_progress(Progress(len(done), len(planned), cached, elapsed, sample))
        if run.result.finish_reason is FinishReason.CANCELLED:
            break
    cancelled = len(done) < len(planned) or any(
        s.result.finish_reason is FinishReason.CANCELLED for s in done
    )
    wall_s = time.perf_counter() - start
    return SuiteRun(tuple(done), tuple(runs), cancelled, cached, wall_s, len(planned))
