"""`maskscope bench`'s batch table: the same samples made one at a time, P at a time in one
llama.cpp batch (engine/decode/batch.py), and by the peer, side by side in one run.

Every row makes the same samples (seeds SEED … SEED + n - 1 of one prompt, every record
kept), so its wall time is what a suite of that many samples costs: P = 1 is the sequential
baseline, where each sample evaluates the prompt and builds its backend itself, as
`maskscope test` without --parallel does. Two workloads:

- "objects": the currency example to the end of each object, so valid objects per minute
  counts whole, schema-valid answers;
- "decode": the invoice example cut at the bench's step limit, so tokens/s is dominated by
  the per-token work, where a batch can only win on the forward pass (valid/min is n/a:
  the cut objects are truncated by design);
- "fast": the same decode on the fast model (random weights over the same vocabulary,
  engine/bench/tiny_model.py), whose forward pass is a millisecond or two: there the
  sequences' own work (softmax, view, record) is most of a step. The peer does not run it.

Each row also says what llama.cpp's forward passes alone gave: the speed-up over P = 1
counting only the forward passes (prompts included) of the same runs. Where a row's
speed-up falls short of it, the decode loop's own work is the gap; where the forward
passes alone fall short of a target, no work on the loop can meet it on that machine.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.bench.steps import rate
from engine.decode.batch import generate_batch
from engine.decode.loop import build_prompt, generate
from engine.examples import load_example
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.model.llama import Model
from engine.records import RunResult
from engine.schema.validate import validation_issues
from engine.settings import GenerationSettings

PARALLEL = (1, 2, 4, 8)
QUICK_PARALLEL = (1, 2)


@dataclass(frozen=True, slots=True)
class BatchWorkload:
    name: str  # "objects" or "decode"
    example: str
    compiled: CompiledSchema
    prompt: str
    settings: GenerationSettings
    whole_objects: bool  # False: cut at the step limit, valid/min means nothing
    fast: bool = False  # made on the fast model


@dataclass(frozen=True, slots=True)
class Made:
    """What one row (or the peer) made: its samples' tokens and valid ones, and the wall."""

    tokens: int
    valid: int
    wall_s: float
    forward_s: float | None = None  # of the wall, llama.cpp's forward passes (prompts too)


def batch_workloads(steps: int, temperature: float, seed: int) -> list[BatchWorkload]:
    made = []
    for name, example, whole in (
        ("objects", "currency", True),
        ("decode", "invoice", False),
        ("fast", "invoice", False),
    ):
        ex = load_example(example)
        base = ex.settings(GenerationSettings(temperature=temperature, seed=seed))
        settings = base if whole else dataclasses.replace(base, max_tokens=steps)
        compiled = compile_schema(ex.schema_text)
        fast = name == "fast"
        made.append(BatchWorkload(name, example, compiled, ex.prompt, settings, whole, fast))
    return made


def _one(model: Model, w: BatchWorkload, seed: int) -> RunResult:
    gen = generate(model, w.compiled, w.prompt, dataclasses.replace(w.settings, seed=seed))
    while True:
        try:
            next(gen)
        except StopIteration as done:
            return done.value


def ours(model: Model, w: BatchWorkload, seeds: list[int], parallel: int) -> Made:
    """The samples for `seeds`, `parallel` at a time (1: generate(), one after another)."""
    t0 = time.perf_counter()
    results: list[RunResult] = []
    forward_ms = 0.0
    for start in range(0, len(seeds), parallel):
        chunk = seeds[start : start + parallel]
        if parallel == 1:
            one = _one(model, w, chunk[0])
            results.append(one)
            forward_ms += one.prompt_ms + one.forward_ms
        else:
            runs = generate_batch(model, w.compiled, w.prompt, w.settings, chunk)
            results += [r.result for r in runs]
            forward_ms += batch_forward_ms([r.result for r in runs])
    wall = time.perf_counter() - t0
    tokens, valid = sum(r.n_tokens for r in results), sum(r.valid for r in results)
    return Made(tokens, valid, wall, forward_ms / 1000.0)


def batch_forward_ms(results: list[RunResult]) -> float:
    """A batch's forward passes: its prompt, evaluated once, and each step's one pass, which
    every sequence still live counts in its forward_ms; the longest-lived counted them all."""
    return results[0].prompt_ms + max(r.forward_ms for r in results)


def peer(peer_llama: Any, model: Model, w: BatchWorkload, seeds: list[int]) -> Made:
    """llama-cpp-python's create_completion under its own JSON-schema grammar, one sample at
    a time on the same prompt text; validity is judged as ours is (JSON, then the schema)."""
    from llama_cpp import LlamaGrammar

    t0 = time.perf_counter()
    grammar = LlamaGrammar.from_json_schema(json.dumps(w.compiled.schema), verbose=False)
    tokens = model.tokenize(build_prompt(model, w.prompt, w.settings), add_special=True)
    n_tokens = n_valid = 0
    for seed in seeds:
        peer_llama.reset()
        out = peer_llama.create_completion(
            tokens,
            grammar=grammar,
            max_tokens=w.settings.max_tokens,
            temperature=w.settings.temperature,
            seed=seed,
        )
        n_tokens += int(out["usage"]["completion_tokens"])
        choice = out["choices"][0]
        n_valid += choice["finish_reason"] == "stop" and _valid(choice["text"], w.compiled.schema)
    return Made(n_tokens, n_valid, time.perf_counter() - t0)


def _valid(text: str, schema: Any) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return not validation_issues(value, schema)


def row_of(made: Made, baseline: Made, whole_objects: bool) -> dict[str, Any]:
    tokens_per_s = rate(made.tokens, made.wall_s)
    base_rate = rate(baseline.tokens, baseline.wall_s)
    forward_rate = rate(made.tokens, made.forward_s)
    base_forward_rate = rate(baseline.tokens, baseline.forward_s)
    return {
        "tokens_per_s": tokens_per_s,
        "valid_per_min": made.valid / made.wall_s * 60.0 if whole_objects else None,
        "speedup": tokens_per_s / base_rate if tokens_per_s and base_rate else None,
        # Counting only the forward passes: a speed-up short of it is the loop's own work.
        "forward_speedup": (
            forward_rate / base_forward_rate if forward_rate and base_forward_rate else None
        ),
        "forward_s": made.forward_s,
        "samples_valid": made.valid,
        "tokens": made.tokens,
        "wall_s": made.wall_s,
    }


def batch_table(
    model: Model,
    peer_llama: Any,
    workloads: list[BatchWorkload],
    n_samples: int,
    parallel: tuple[int, ...],
    progress: Callable[[str], None],
    fast_model: Model | None = None,
) -> dict[str, Any]:
    """{"batch": [{"parallel": P, workload: row, …}, …], "batch_peer": {workload: row}, …}:
    each workload's rows measured back to back; speed-ups are over the P = 1 row. The fast
    workload runs on `fast_model` (left out without one), and not by the peer."""
    seeds = list(range(n_samples))
    rows: list[dict[str, Any]] = [{"parallel": p} for p in parallel]
    peer_rows: dict[str, Any] = {}
    for w in workloads:
        runs_on = fast_model if w.fast else model
        if runs_on is None:
            continue
        made = []
        for p in parallel:
            progress(f"batch: {w.name} ({w.example}), {n_samples} samples, P = {p}")
            made.append(ours(runs_on, w, seeds, p))
        for row, m in zip(rows, made, strict=True):
            row[w.name] = row_of(m, made[0], w.whole_objects)
        if w.fast:
            continue
        progress(f"batch: {w.name} ({w.example}), {n_samples} samples, the peer")
        peer_rows[w.name] = row_of(peer(peer_llama, model, w, seeds), made[0], w.whole_objects)
    # The flat numbers `--json` promises per P: those of the whole-object workload.
    for row in rows:
        row["tokens_per_s"] = row["objects"]["tokens_per_s"]
        row["valid_per_min"] = row["objects"]["valid_per_min"]
    return {
        "batch": rows,
        "batch_peer": peer_rows,
        "batch_samples": n_samples,
        "batch_workloads": {
            w.name: w.example for w in workloads if not w.fast or fast_model is not None
        },
    }
