"""The bench's engine table: each production engine on its own compiler's grammar.

One row per engine, as production runs it: llguidance's compiler on llguidance, XGrammar's on
XGrammar, outlines-core's on its Index, llama.cpp's converter on llama.cpp's sampler, and
Maskscope's grammar on llguidance. Per schema, `compile` is schema text to a backend ready
for its first mask (outlines-core's Index build included; every engine's cache is cold for
a schema's first compile). `mask` is the full-vocabulary mask at each step of a run that
engine constrains (llama.cpp with `exact_mask`, so that its number is a full mask too),
step 0 left out. MaskBench publishes the same two numbers per engine on one EPYC core.

The table runs on the bundled examples, not the bench's MaskBench schemas: outlines-core's
Index over Gemma's 262,144 tokens took 1.4-14 s on the first five of those and over 120 s on
the sixth (Github_hard---o14495), and an Index build cannot be stopped, only abandoned, still
using a core that every later number would share. On the examples it takes 0.25-45 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from engine.decode.loop import generate
from engine.errors import MaskscopeError
from engine.examples import Example, examples, load_example
from engine.grammar.compile import compile_schema
from engine.masking import make_backend
from engine.model.llama import Model
from engine.settings import GenerationSettings, missing_engine

# (row, compiler, backend)
ENGINES: tuple[tuple[str, str, str], ...] = (
    ("llguidance", "llguidance", "llguidance"),
    ("xgrammar", "xgrammar", "xgrammar"),
    ("outlines", "outlines", "outlines"),
    ("llama.cpp", "llamacpp", "llamacpp"),
    ("maskscope", "maskscope", "llguidance"),
)
# MaskBench's figures (one EPYC core), printed beside ours: mask p50/p99 µs, compile p50 ms.
PUBLISHED: dict[str, str] = {
    "llguidance": "mask 46 µs / 533 µs, compile ~1 ms",
    "xgrammar": "mask 9 µs / 5.7 ms, compile 920 ms",
    "outlines": "mask 34 µs / 7.2 ms, compile 590 ms",
    "llama.cpp": "mask 17 ms / 60 ms",
}


QUICK_EXAMPLES = ("currency", "function_call")  # Index builds of about 0.3 s and 5 s


def engine_workloads(quick: bool) -> list[Example]:
    return [load_example(n) for n in QUICK_EXAMPLES] if quick else examples()


@dataclass(slots=True)
class EngineSamples:
    compile: list[float] = field(default_factory=list)
    mask: list[float] = field(default_factory=list)
    refused: int = 0  # schemas the engine did not compile (or past its time limit)


def engine_table(
    model: Model,
    workloads: list[Example],
    steps: int,
    temperature: float,
    seed: int,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """{row: {compile_ms_p50, compile_ms_p99, mask_ms_p50, mask_ms_p99, schemas, refused}},
    or {row: {"missing": why}} for an engine that is not installed."""
    table: dict[str, Any] = {}
    for row, compiler, backend in ENGINES:
        missing = missing_engine(compiler) or missing_engine(backend)
        if missing:
            table[row] = {"missing": missing}
            continue
        progress(f"engine table: {row}")
        samples = EngineSamples()
        for workload in workloads:
            _measure(model, workload, compiler, backend, steps, temperature, seed, samples)
        table[row] = _summary(samples, len(workloads))
    return table


def _measure(
    model: Model,
    workload: Example,
    compiler: str,
    backend: str,
    steps: int,
    temperature: float,
    seed: int,
    into: EngineSamples,
) -> None:
    t0 = time.perf_counter()
    try:
        compiled = compile_schema(workload.schema_text, compiler)
        make_backend(backend, model, compiled).close()
    except MaskscopeError:
        into.refused += 1
        return
    into.compile.append((time.perf_counter() - t0) * 1000.0)
    settings = GenerationSettings(
        max_tokens=steps, temperature=temperature, seed=seed, backend=backend,
        compiler=compiler, exact_mask=True,
    )  # fmt: skip
    records = generate(model, compiled, workload.prompt, settings)
    into.mask += [r.mask_ms for r in records if r.step > 0]


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _summary(s: EngineSamples, schemas: int) -> dict[str, Any]:
    return {
        "compile_ms_p50": _pct(s.compile, 50),
        "compile_ms_p99": _pct(s.compile, 99),
        "mask_ms_p50": _pct(s.mask, 50),
        "mask_ms_p99": _pct(s.mask, 99),
        "schemas": schemas,
        "refused": s.refused,
    }


def print_engine_table(
    table: dict[str, Any], fmt: Callable[[float | None], str], out: TextIO
) -> None:
    print(file=out)
    print(
        "engines, each on its own compiler's grammar (compile: schema to a ready backend; "
        "mask: full vocabulary, per step)",
        file=out,
    )
    heads = ["compile ms p50", "compile ms p99", "mask ms p50", "mask ms p99", "refused"]
    print(
        f"  {'':<12}" + "".join(f"{h:>15}" for h in heads) + "   MaskBench (1 EPYC core)", file=out
    )
    for row, cells in table.items():
        if "missing" in cells:
            print(f"  {row:<12} {cells['missing']}", file=out)
            continue
        values = [fmt(cells[k]) for k in ("compile_ms_p50", "compile_ms_p99")]
        values += [fmt(cells[k]) for k in ("mask_ms_p50", "mask_ms_p99")]
        values.append(f"{cells['refused']}/{cells['schemas']}")
        line = f"  {row:<12}" + "".join(f"{v:>15}" for v in values)
        print(f"{line}   {PUBLISHED.get(row, '')}".rstrip(), file=out)
