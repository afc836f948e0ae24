"""`maskscope bench`'s overhead table: the per-step overhead, (step - forward) / forward, on
two models and two thread counts, side by side in one run.

- "real": the model the bench runs (the default Gemma 3 270M);
- "fast": a random-weight model over the same 262,144-token vocabulary
  (engine/bench/tiny_model.py), whose forward pass is mostly the output layer, a millisecond
  or two: how the step looks beside a GPU's forward pass of a small model;
- "default": llama.cpp's default threads (every core: the step's own work runs in turn);
- "free_core": cores - 1 threads, so the record and the next mask run beside the forward
  pass (engine/decode/overlap.py), as they do beside a GPU. None on a one-core machine.

The prompts go round the four models in turn, each backend on each, so load that drifts
during the run (others' jobs on a shared machine) hits every column alike. Each column ends
with its floor (engine/bench/floor.py): bare forward passes that only copy the logits out
and read them as the draw does, the least overhead that model and thread count allow.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from engine.bench.floor import floor_ratios
from engine.bench.steps import SEED, BackendSamples, backend_summary, constrained_run, pct
from engine.bench.tiny_model import tiny_model
from engine.grammar.compile import compile_schema
from engine.model.llama import Model

# How many of the bench's prompts (the first ones: currency, invoice, then schemas) it runs.
OVERHEAD_PROMPTS, QUICK_OVERHEAD_PROMPTS = 6, 1
THREADS = ("default", "free_core")


@dataclass(slots=True)
class _Column:
    workload: str  # "real" or "fast"
    threads: str  # "default" or "free_core"
    model: Model
    owned: bool  # loaded here (closed here), not the bench's own model
    samples: dict[str, BackendSamples]


def _columns(model: Model, backends: Sequence[str]) -> list[_Column]:
    """The bench's model as real/default, and the others loaded beside it."""
    cores = os.cpu_count() or 1
    threads = {"default": model.settings.n_threads, "free_core": cores - 1}
    fast_path = str(tiny_model("gemma3"))
    columns = []
    for workload, path in (("real", model.settings.path), ("fast", fast_path)):
        for name in THREADS:
            if threads[name] == 0:  # one core: none to spare
                continue
            if workload == "real" and name == "default":
                loaded, owned = model, False
            else:
                settings = dataclasses.replace(model.settings, path=path, n_threads=threads[name])
                loaded, owned = Model.load(settings), True
            samples = {b: BackendSamples() for b in backends}
            columns.append(_Column(workload, name, loaded, owned, samples))
    return columns


def overhead_table(
    model: Model,
    prompts: Sequence[tuple[str, str]],
    backends: Sequence[str],
    steps: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """{"real": {"default": column, "free_core": column or None}, "fast": {…}} for
    (schema text, prompt) pairs; a column is its threads, whether steps overlap, the
    forward pass's p50 and each backend's summary (engine/bench/steps.py)."""
    columns = _columns(model, backends)
    try:
        for i, (schema_text, prompt) in enumerate(prompts):
            progress(f"overhead: prompt {i + 1}/{len(prompts)} on {len(columns)} models")
            compiled = compile_schema(schema_text)
            order = columns if i % 2 == 0 else columns[::-1]
            for column in order:
                for backend in backends if i % 2 == 0 else backends[::-1]:
                    samples = column.samples[backend]
                    constrained_run(column.model, compiled, prompt, backend, steps, samples)
        progress("overhead: the floor, bare forward passes on each model")
        table: dict[str, Any] = {w: dict.fromkeys(THREADS) for w in ("real", "fast")}
        for c in columns:
            table[c.workload][c.threads] = {
                "threads": c.model.info.n_threads,
                "steps_overlap": c.model.has_spare_compute,
                "forward_ms_p50": pct([f for s in c.samples.values() for f in s.forward], 50),
                "backends": {b: backend_summary(s) for b, s in c.samples.items()},
                "floor": floor_ratios(c.model, 4 * steps, SEED),  # bare steps: cheap, so more
            }
    finally:
        for c in columns:
            if c.owned:
                c.model.close()
    return table


def print_overhead_table(
    table: dict[str, Any],
    cell: Callable[[str], str],
    row: Callable[[str, list[str], str, TextIO], None],
    target: Callable[[list[str]], str],
    out: TextIO,
) -> None:
    """One column per model and thread count; `cell`, `row` and `target` format as the rest
    of the bench's table does (a cell by its path in the result, with its verdict)."""
    columns = [f"overhead.{w}.{t}" for w in ("real", "fast") for t in THREADS if table[w][t]]
    heads = []
    for path in columns:
        _, workload, threads = path.split(".")
        free = " free" if threads == "free_core" else ""
        heads.append(f"{workload} {table[workload][threads]['threads']}t{free}")
    print(file=out)
    print(
        "overhead, side by side: real = the model above, fast = random weights over its "
        "vocabulary; Nt = llama.cpp threads, free = a core left for the step's own work",
        file=out,
    )
    row("", heads, "target", out)
    row("forward ms p50", [cell(f"{c}.forward_ms_p50") for c in columns], "", out)
    for backend in table["real"]["default"]["backends"]:
        for label, key in (("step ms p50", "step_ms_p50"), ("overhead", "overhead_ratio")):
            paths = [f"{c}.backends.{backend}.{key}" for c in columns]
            row(f"{backend} {label}", [cell(p) for p in paths], target(paths), out)
    for label, key in (("floor: copy", "copy"), ("floor: + draw reads", "copy_and_draw")):
        row(label, [cell(f"{c}.floor.{key}") for c in columns], "", out)
    print(
        "floor: bare forward passes that only copy the logits out (+ the Gumbel draw's "
        "reads of them): the least overhead this machine allows an exact, recorded step",
        file=out,
    )
