"""Hashes of every record that generate() and generate_batch() make, over the modes the
decode step has (backends, temperatures, keep_full, cross-checks, forced tokens,
unconstrained, a batch of 3), with llama.cpp threads that leave a core free ("spare": the
drawn-ahead path, engine/decode/gumbel.py) and that take every core ("busy": the inverse-CDF
draw), on the default model and on a tiny
random-weight model over Gemma's vocabulary (whose spread logits reach the Gumbel tail).

`python -m tests.golden_records FILE` writes them; tests/engine/test_records_golden.py
asserts that today's code makes the same. Timing fields are zeroed: they differ run to run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from engine.decode.batch import generate_batch
from engine.decode.loop import generate
from engine.examples import load_example
from engine.grammar.compile import compile_schema
from engine.model.llama import Model
from engine.records import RunResult, StepRecord
from engine.settings import GenerationSettings, ModelSettings
from tests.tiny_models import tiny_model

GOLDEN = Path(__file__).parent / "data" / "golden_records.json"
_TIMINGS = ("forward_ms", "mask_ms", "total_ms", "setup_ms", "prompt_ms")


def _feed(digest: Any, value: Any) -> None:
    """A canonical byte stream of a record: floats by their exact bits, arrays by bytes."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        digest.update(type(value).__name__.encode())
        for f in dataclasses.fields(value):
            item = 0.0 if f.name in _TIMINGS else getattr(value, f.name)
            digest.update(f.name.encode())
            _feed(digest, item)
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype}{value.shape}".encode() + value.tobytes())
    elif isinstance(value, (list, tuple)):
        digest.update(f"[{len(value)}".encode())
        for item in value:
            _feed(digest, item)
    elif isinstance(value, dict):
        digest.update(f"{{{len(value)}".encode())
        for key in sorted(value, key=str):
            _feed(digest, key)
            _feed(digest, value[key])
    elif isinstance(value, float):
        digest.update(b"f" + float(value).hex().encode())
    elif isinstance(value, Enum):
        _feed(digest, value.value)
    else:
        digest.update(f"{type(value).__name__}:{value!r}".encode())


def record_hash(value: Any) -> str:
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()[:16]


def _run(model: Model, schema: str, prompt: str, s: GenerationSettings, **kw: Any) -> str:
    compiled = compile_schema(schema, s.compiler)
    gen = generate(model, compiled, prompt, s, **kw)
    records: list[StepRecord] = []
    while True:
        try:
            records.append(next(gen))
        except StopIteration as stop:
            result: RunResult = stop.value
            return record_hash((records, result))


def _modes(model: Model, schema: str, prompt: str) -> dict[str, str]:
    out = {}
    for backend in ("llguidance", "llamacpp"):
        for temp in (1.0, 0.0):
            for keep_full in (False, True):
                s = GenerationSettings(
                    backend=backend, temperature=temp, seed=3, max_tokens=24, keep_full=keep_full
                )
                out[f"{backend}-T{temp}-full{keep_full}"] = _run(model, schema, prompt, s)
    s = GenerationSettings(seed=5, max_tokens=16, cross_check=True)
    out["xcheck-backends"] = _run(model, schema, prompt, s)
    s = dataclasses.replace(s, cross_check_compiler="llamacpp")
    out["xcheck-compilers"] = _run(
        model, schema, prompt, s, cross=compile_schema(schema, "llamacpp")
    )
    s = GenerationSettings(seed=5, max_tokens=16)
    forced = model.tokenize('{"', add_special=False, parse_special=False)
    out["forced"] = _run(model, schema, prompt, s, forced=forced)
    s = GenerationSettings(seed=5, max_tokens=16, constrained=False)
    out["unconstrained"] = _run(model, schema, prompt, s)
    for backend in ("llguidance", "llamacpp"):
        s = GenerationSettings(backend=backend, seed=7, max_tokens=16)
        runs = generate_batch(model, compile_schema(schema), prompt, s, [7, 8, 9])
        out[f"batch-{backend}"] = record_hash([(r.records, r.result) for r in runs])
    return out


def golden_hashes() -> dict[str, str]:
    example = load_example("currency")
    out: dict[str, str] = {}
    for name, path in (("gemma", None), ("tiny", str(tiny_model("gemma3")))):
        # The logits do not depend on the thread count; which draw runs does.
        for threads in sorted({1, os.cpu_count() or 1}):
            model = Model.load(ModelSettings(path=path, n_threads=threads, n_ctx=512))
            mode = "spare" if model.has_spare_compute else "busy"
            try:
                modes = _modes(model, example.schema_text, example.prompt)
            finally:
                model.close()
            out.update({f"{name}-{mode}-{k}": v for k, v in modes.items()})
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN
    target.write_text(json.dumps(golden_hashes(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {target}")
