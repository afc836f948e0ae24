"""Run settings shared by the CLI, the window and the benchmark."""

from __future__ import annotations

import argparse
import importlib.util
from dataclasses import asdict, dataclass
from typing import Any

# Which compiler runs on which backend is data, not branches: each compiler hands its backend
# one kind of grammar, and each backend runs some kinds. A new engine is a row in each table
# (and its module, named in engine/grammar/compile.py and engine/masking/base.py).
#   maskscope: Maskscope's own compiler; llamacpp: llama-cpp-python's converter (both GBNF);
#   llguidance: llguidance's own JSON Schema compiler (llguidance's grammar);
#   outlines: outlines-core's build_regex_from_schema (a regex);
#   xgrammar: XGrammar's own JSON Schema compiler, as vLLM calls it (XGrammar's EBNF).
GRAMMAR_KINDS: dict[str, str] = {
    "maskscope": "gbnf",
    "llamacpp": "gbnf",
    "llguidance": "llguidance",
    "outlines": "regex",
    "xgrammar": "xgrammar",
}
# llguidance translates GBNF into its Lark; outlines-core's Index reads a regex only;
# XGrammar parses GBNF as its own EBNF, of which GBNF is nearly a subset.
BACKEND_KINDS: dict[str, frozenset[str]] = {
    "llguidance": frozenset({"gbnf", "llguidance"}),
    "llamacpp": frozenset({"gbnf"}),
    "outlines": frozenset({"regex"}),
    "xgrammar": frozenset({"gbnf", "xgrammar"}),
}
_KIND_NOUNS = {"gbnf": "grammar", "llguidance": "grammar", "regex": "regex", "xgrammar": "grammar"}
# Engines installed only with an extra: the module each needs, and the line that installs it.
OPTIONAL_ENGINES: dict[str, tuple[str, str]] = {
    "xgrammar": ("xgrammar", "pip install 'maskscope[xgrammar]' (it brings torch)"),
}
COMPILERS = tuple(GRAMMAR_KINDS)
BACKENDS = tuple(BACKEND_KINDS)
DEFAULT_COMPILER = "maskscope"
DEFAULT_BACKEND = "llguidance"


def missing_engine(name: str) -> str | None:
    """Why the compiler or backend `name` cannot load here, in one line; None when it can
    (as far as finding its module tells: an import that fails later says so itself)."""
    if name not in OPTIONAL_ENGINES:
        return None
    module, install = OPTIONAL_ENGINES[name]
    if importlib.util.find_spec(module) is not None:
        return None
    return f"{name} is not installed: {install}"


def runs_on(compiler: str, backend: str) -> bool:
    """Whether `backend` runs the grammar `compiler` makes."""
    kind = GRAMMAR_KINDS.get(compiler)
    return kind is not None and kind in BACKEND_KINDS.get(backend, frozenset())


def backends_for(compiler: str) -> tuple[str, ...]:
    return tuple(b for b in BACKENDS if runs_on(compiler, b))


def compilers_for(backend: str) -> tuple[str, ...]:
    return tuple(c for c in COMPILERS if runs_on(c, backend))


def grammar_noun(compiler: str) -> str:
    """What a compiler's output is called in messages: "grammar", or "regex"."""
    return _KIND_NOUNS[GRAMMAR_KINDS[compiler]]


def pairing_problem(compiler: str, backend: str) -> str | None:
    """Why `compiler`'s grammar cannot run on `backend`, in one line; None when it can.

    The message names the one choice that fixes it where there is one: a grammar that only
    one backend runs names that backend, a backend that runs only one compiler's names it.
    """
    if compiler not in GRAMMAR_KINDS:
        return f"unknown compiler {compiler!r}; choose one of {', '.join(COMPILERS)}"
    if backend not in BACKEND_KINDS:
        return f"unknown mask backend {backend!r}; choose one of {', '.join(BACKENDS)}"
    if runs_on(compiler, backend):
        return None
    noun = grammar_noun(compiler)
    homes = backends_for(compiler)
    if len(homes) == 1:
        return (
            f"the {compiler} compiler's {noun} runs on the {homes[0]} backend only: "
            f"choose the {homes[0]} backend or another compiler"
        )
    guests = compilers_for(backend)
    if len(guests) == 1:
        return (
            f"the {backend} backend runs the {guests[0]} compiler's {grammar_noun(guests[0])} "
            f"only: choose the {guests[0]} compiler or another backend"
        )
    return (
        f"the {compiler} compiler's {noun} does not run on the {backend} backend: "
        f"choose one of the backends {', '.join(homes)}"
    )


def pairings_text() -> str:
    """Which compiler runs on which backend, in words, for --help."""
    return "; ".join(f"{c} on {' or '.join(backends_for(c))}" for c in COMPILERS)


def cross_check_backend(compiler: str, backend: str) -> str | None:
    """The backend a backends' cross-check compares `backend` with: the first other one
    that runs `compiler`'s grammar; None when there is none."""
    return next((b for b in backends_for(compiler) if b != backend), None)


def cross_check_problem(compiler: str, backend: str) -> str | None:
    """Why the backends cannot be cross-checked on `compiler`'s grammar; None when they can."""
    if cross_check_backend(compiler, backend) is not None:
        return None
    noun = grammar_noun(compiler)
    if len(compilers_for(backend)) <= 1:
        return (
            f"the {compiler} compiler's {noun} runs on no other backend, and the {backend} "
            "backend runs no other compiler's grammar: there is nothing to cross-check"
        )
    return (
        f"cross-checking the backends needs a grammar both run, and the {compiler} "
        f"compiler's runs on {backend} only: cross-check another compiler instead"
    )


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
        for name in (self.compiler, other):  # the run's own grammar first
            if name is not None and (found := pairing_problem(name, self.backend)):
                return found
        if self.cross_check and not self.constrained:
            return "an unconstrained run has no mask to cross-check"
        if other == self.compiler:
            return f"cross-check against a compiler other than the run's own ({other})"
        if self.cross_check and other is None:
            return cross_check_problem(self.compiler, self.backend)
        return None
