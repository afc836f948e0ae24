"""Run settings shared by the CLI, the window and the benchmark."""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from typing import Any

BACKENDS = ("llguidance", "llamacpp")
DEFAULT_BACKEND = "llguidance"
# maskscope: Maskscope's own compiler; llamacpp: llama-cpp-python's converter; llguidance:
# llguidance's own JSON Schema compiler, which only the llguidance backend can run.
COMPILERS = ("maskscope", "llamacpp", "llguidance")
DEFAULT_COMPILER = "maskscope"
# outlines: outlines-core's compiler (a regex, not GBNF) and its Index/Guide backend, which
# run only with each other. The engine takes them; the window, `check`'s table and the
# benchmark still enumerate COMPILERS/BACKENDS, which gain them once those places handle a
# backend that runs only its own compiler's grammar (issue 23).
ENGINE_COMPILERS = (*COMPILERS, "outlines")
ENGINE_BACKENDS = (*BACKENDS, "outlines")


@dataclass(frozen=True, slots=True)
class Range:
    """The values one numeric setting accepts, bounds included.

    The command line (as an argparse type function) and the window's spin boxes both read
    these, so the two accept the same values.
    """

    kind: type[int] | type[float]
    low: int | float
    high: int | float

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int | float) and self.low <= value <= self.high  # nan: False

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text)
        except ValueError:
            what = "a whole number" if self.kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value not in self:
            raise argparse.ArgumentTypeError(f"must be from {self.low} to {self.high}, not {text}")
        return value


MAX_TOKENS = Range(int, 1, 8192)
TEMPERATURE = Range(float, 0.0, 2.0)
SEED = Range(int, 0, 2**31 - 1)  # a QSpinBox holds a C int
TOP_K = Range(int, 1, 50)
N_GPU_LAYERS = Range(int, -1, 999)  # -1: all
N_CTX = Range(int, 16, 1 << 20)  # llama.cpp keeps it in 32 bits
N_THREADS = Range(int, 1, 1024)


@dataclass(frozen=True, slots=True)
class ModelSettings:
    path: str | None = None  # None means the default model (Gemma 3 270M, Q4_K_M)
    n_gpu_layers: int = -1  # -1 offloads every layer where the build supports a GPU
    n_ctx: int = 4096
    n_threads: int | None = None  # None lets the engine pick


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    max_tokens: int = 256
    temperature: float = 0.7  # 0 means greedy
    seed: int = 0
    top_k: int = 10  # candidates kept per step in each StepRecord
    backend: str = DEFAULT_BACKEND
    compiler: str = DEFAULT_COMPILER  # which compiler turns the schema into the grammar
    exact_mask: bool = False  # llamacpp: check the full vocabulary, not just the probable head
    cross_check: bool = False  # compute a second mask too and report disagreements
    # With cross_check: None compares the other backend on the same grammar; a compiler's
    # name compares that compiler's grammar on the same backend.
    cross_check_compiler: str | None = None
    chat_template: bool = False  # wrap the prompt in the GGUF's chat template
    keep_full: bool = (
        False  # attach full-vocabulary P and valid mask to each record (tests, audits)
    )
    # False decodes with no mask at all (the model alone), to compare with the grammar's run;
    # the output is still validated against the schema.
    constrained: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def problem(self) -> str | None:
        """Why these settings cannot run together, in one line; None when they can."""
        other = self.cross_check_compiler if self.cross_check else None
        for name in (self.compiler, other):
            if name is not None and name not in ENGINE_COMPILERS:
                return f"unknown compiler {name!r}; choose one of {', '.join(ENGINE_COMPILERS)}"
        outlines = _outlines_problem(self.compiler, self.backend, self.cross_check, other)
        if outlines is not None:
            return outlines
        if "llguidance" in (self.compiler, other) and self.backend != "llguidance":
            return (
                "the llguidance compiler's grammar runs on the llguidance backend only: "
                "choose the llguidance backend or another compiler"
            )
        if self.cross_check and not self.constrained:
            return "an unconstrained run has no mask to cross-check"
        if other == self.compiler:
            return f"cross-check against a compiler other than the run's own ({other})"
        if self.cross_check and other is None and self.compiler == "llguidance":
            return (
                "cross-checking the backends needs a grammar both run, and the llguidance "
                "compiler's runs on llguidance only: cross-check another compiler instead"
            )
        return None


def _outlines_problem(
    compiler: str, backend: str, cross_check: bool, other: str | None
) -> str | None:
    """Why an outlines run cannot go ahead: its regex runs on its backend only, and that
    backend runs nothing else (it takes a regex, not GBNF)."""
    if backend == "outlines" and compiler != "outlines":
        return (
            "the outlines backend runs the outlines compiler's regex only: "
            "choose the outlines compiler or another backend"
        )
    if "outlines" in (compiler, other) and backend != "outlines":
        return (
            "the outlines compiler's regex runs on the outlines backend only: "
            "choose the outlines backend or another compiler"
        )
    if backend == "outlines" and cross_check:
        return (
            "the outlines compiler's regex runs on no other backend, and the outlines "
            "backend runs no other compiler's grammar: there is nothing to cross-check"
        )
    return None
