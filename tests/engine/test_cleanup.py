"""Native resources are freed exactly once, also when a run or a load fails early."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

import engine.decode.loop
import engine.decode.stepper
from engine.errors import MaskscopeError
from engine.grammar.compile import CompiledSchema
from engine.masking import MaskBackend
from engine.model.llama import Model
from engine.runs.headless import run_to_end
from engine.settings import GenerationSettings


def _record_backends(monkeypatch: pytest.MonkeyPatch) -> Counter[MaskBackend]:
    """The backends generate() builds, each with how often it was closed.

    generate() builds them itself and hands them to nobody, so make_backend is wrapped:
    the backends are the real ones, only their close() is counted on the way through.
    """
    closes: Counter[MaskBackend] = Counter()
    real_make = engine.decode.loop.make_backend

    def make(name: str, model: Model, compiled: CompiledSchema, *args: object) -> MaskBackend:
        backend = real_make(name, model, compiled, *args)
        real_close = backend.close
        closes[backend] = 0

        def close() -> None:
            closes[backend] += 1
            real_close()

        backend.close = close  # type: ignore[method-assign]
        return backend

    monkeypatch.setattr(engine.decode.loop, "make_backend", make)
    monkeypatch.setattr(engine.decode.stepper, "make_backend", make)  # the cross-check's
    return closes


@pytest.mark.parametrize(
    ("prompt", "chat_template"),
    [("word " * 5000, False), ("Hello.", True)],
    ids=["prompt-longer-than-the-context", "chat-template-on-a-base-model"],
)
@pytest.mark.parametrize(
    ("backend", "cross_check"),
    [("llguidance", False), ("llamacpp", True)],
    ids=["llguidance", "llamacpp+cross-check"],
)
def test_an_error_before_the_first_step_closes_the_backends(
    model, person, monkeypatch, prompt, chat_template, backend, cross_check
):
    closes = _record_backends(monkeypatch)
    _, compiled = person
    settings = GenerationSettings(
        backend=backend, cross_check=cross_check, chat_template=chat_template
    )
    with pytest.raises(MaskscopeError):
        run_to_end(model, compiled, prompt, settings)
    assert len(closes) == (2 if cross_check else 1)  # the premise: they were built
    assert set(closes.values()) == {1}


# Run in a child: its address space is capped so that the model loads but the KV cache of
# the largest context setting cannot be allocated, and llama.cpp refuses the context.
# llama.cpp cannot say how often a model was freed, so llama_model_free is wrapped to count
# it. Only the first call for a model reaches llama.cpp: a second is the real double free,
# which took the process down with SIGSEGV.
_FAILED_CONTEXT = """
import ctypes, gc, json, re, resource
from collections import Counter
from pathlib import Path

import llama_cpp

from engine.errors import ModelLoadError
from engine.model.llama import Model
from engine.settings import N_CTX, ModelSettings

frees = Counter()
real_free = llama_cpp.llama_model_free


def free(handle):
    key = ctypes.cast(handle, ctypes.c_void_p).value
    frees[key] += 1
    if frees[key] == 1:
        real_free(handle)


llama_cpp.llama_model_free = free
status = Path("/proc/self/status").read_text()
used = int(re.search(r"VmSize:\\s+(\\d+) kB", status).group(1)) * 1024
_, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (used + 1536 * 2**20, hard))
message = ""
try:
    Model.load(ModelSettings(n_ctx=N_CTX.high))
except ModelLoadError as exc:
    message = str(exc)
gc.collect()  # the half-made Model is garbage now: its __del__ has run
print(json.dumps({"message": message, "frees": sorted(frees.values())}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, caps RLIMIT_AS")
def test_a_failed_context_frees_the_model_once() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FAILED_CONTEXT], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["message"].startswith("cannot create a context"), found
    # llama.cpp's first error, not the warning it logged before it (about the SWA cache)
    assert "insufficient memory" in found["message"], found
    assert found["frees"] == [1]
