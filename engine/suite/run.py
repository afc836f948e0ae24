"""Running a suite: every case × N samples on the real model, one after another or P at a
time in one llama.cpp batch (engine/decode/batch.py: one forward pass serves P samples of a
case, each with its own grammar state and records).

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

from engine.decode.batch import generate_batch
from engine.decode.loop import generate
from engine.grammar.compile import CompiledSchema, compile_schema, cross_grammar
from engine.model.llama import Model
from engine.records import FinishReason, RunResult, StepRecord
from engine.runs.provenance import model_digest, provenance_of
from engine.runs.saved import SavedRun
from engine.settings import GenerationSettings
from engine.suite.cache import RunCache, grammar_digest, made_by, sample_key
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
    decode_s: float = 0.0  # of wall_s, spent decoding (cached samples cost none)


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
    cross = cross_grammar(compiled, planned.settings)
    gen = generate(model, compiled, planned.prompt, planned.settings, should_stop, cross=cross)
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
    parallel: int = 1,
    cache: RunCache | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[Progress], None] | None = None,
) -> SuiteRun:
    """Run every case `samples` times (the suite's own count by default), up to `parallel`
    samples of a case in one batch. Bad input (the schema, a prompt variable, the settings)
    raises MaskscopeError before any decoding."""
    base = suite.settings()
    planned = list(_plan(suite, samples or suite.samples, base))
    runner = _Runner(model, suite, compile_schema(suite.schema_text, base.compiler), cache)
    for chunk in _chunks(planned, max(1, parallel)):
        if not runner.run_chunk(chunk, should_stop, on_progress, len(planned)):
            break
    done = runner.samples
    cancelled = len(done) < len(planned) or any(
        s.result.finish_reason is FinishReason.CANCELLED for s in done
    )
    wall_s = time.perf_counter() - runner.start
    return SuiteRun(
        tuple(done), tuple(runner.runs), cancelled, runner.cached, wall_s, len(planned),
        runner.decode_s,
    )  # fmt: skip


def _chunks(planned: list[_Planned], size: int) -> Iterator[list[_Planned]]:
    """Consecutive samples of one case, at most `size` at a time: a batch shares a prompt."""
    chunk: list[_Planned] = []
    for plan in planned:
        if chunk and (len(chunk) == size or chunk[0].case is not plan.case):
            yield chunk
            chunk = []
        chunk.append(plan)
    if chunk:
        yield chunk


class _Runner:
    """The state of one suite run between its chunks of samples."""

    def __init__(
        self, model: Model, suite: Suite, compiled: CompiledSchema, cache: RunCache | None
    ) -> None:
        self.model, self.suite, self.compiled, self.cache = model, suite, compiled, cache
        self.model_sha = model_digest(model.info.path)[1]
        self.grammar_sha = grammar_digest(compiled)
        self.start = time.perf_counter()
        self.samples: list[Sample] = []
        self.runs: list[SavedRun] = []
        self.cached = 0
        self.decode_s = 0.0

    def run_chunk(
        self,
        chunk: list[_Planned],
        should_stop: Callable[[], bool],
        on_progress: Callable[[Progress], None] | None,
        total: int,
    ) -> bool:
        """Decode (or read back) one chunk; False once the run must end (a cancel)."""
        keys = [self._key(p) for p in chunk]
        found = {i: r for i, k in enumerate(keys) if (r := self._cached(k)) is not None}
        todo = [p for i, p in enumerate(chunk) if i not in found]
        if todo and should_stop():
            return False
        made = iter(self._decode(todo, should_stop) if todo else ())
        for i, plan in enumerate(chunk):
            run = found.get(i) or next(made)
            if i not in found and self.cache is not None and not _cancelled(run):
                self.cache.put(keys[i], run)
            self._add(plan, run, keys[i], on_progress, total)
            if _cancelled(run):
                return False
        return True

    def _key(self, plan: _Planned) -> str:
        return sample_key(
            self.model_sha, self.suite.schema_text, plan.prompt, plan.settings,
            self.grammar_sha, made_by(),
        )  # fmt: skip

    def _cached(self, key: str) -> SavedRun | None:
        run = self.cache.get(key) if self.cache is not None else None
        if run is not None and run.grammar_sha256 != self.grammar_sha:
            run = None  # made under another grammar, whatever its key says: decode again
        self.cached += run is not None
        return run

    def _decode(self, todo: list[_Planned], should_stop: Callable[[], bool]) -> list[SavedRun]:
        t0 = time.perf_counter()
        if len(todo) == 1:
            result, records = _decode(self.model, self.compiled, todo[0], should_stop)
            made = [(todo[0], result, records)]
        else:
            seeds = [p.settings.seed for p in todo]
            batch = generate_batch(
                self.model, self.compiled, todo[0].prompt, todo[0].settings, seeds, should_stop
            )
            made = [(p, s.result, s.records) for p, s in zip(todo, batch, strict=True)]
        self.decode_s += time.perf_counter() - t0
        return [self._saved(p, result, records) for p, result, records in made]

    def _saved(
        self, plan: _Planned, result: RunResult, records: tuple[StepRecord, ...]
    ) -> SavedRun:
        m = self.model
        made = provenance_of(m.info.path, plan.settings, m.n_vocab)
        return SavedRun(
            self.suite.schema_text, plan.prompt, m.info.name, records, result, made,
            self.grammar_sha,
        )  # fmt: skip

    def _add(
        self,
        plan: _Planned,
        run: SavedRun,
        key: str,
        on_progress: Callable[[Progress], None] | None,
        total: int,
    ) -> None:
        sample = sample_from_run(
            plan.case.id, plan.index, plan.settings.seed, run.result, run.records,
            expectations=plan.case.expected, run_key=key,
        )  # fmt: skip
        self.samples.append(sample)
        self.runs.append(run)
        if on_progress is not None:
            elapsed = time.perf_counter() - self.start
            on_progress(Progress(len(self.samples), total, self.cached, elapsed, sample))


def _cancelled(run: SavedRun) -> bool:
    return run.result.finish_reason is FinishReason.CANCELLED
