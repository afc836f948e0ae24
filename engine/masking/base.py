"""The seam every mask backend fits behind."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from engine.errors import GrammarError
from engine.settings import BACKENDS, missing_engine, pairing_problem

if TYPE_CHECKING:
    from engine.grammar.compile import CompiledSchema
    from engine.model.llama import Model


class MaskBackend(Protocol):
    """A compiled grammar that tracks the output so far.

    `full_mask` answers for every token; `check` only for the tokens given,
    which lets a backend with a costly per-token check look at the probable
    head of the distribution first.
    """

    name: str
    cheap_full_mask: bool  # True when full_mask costs about as much as check

    def prepare(self, likely: np.ndarray | None = None) -> None:
        """Start work on the next mask while the forward pass runs.

        `likely` holds the tokens probable at the last step, for a backend that can only
        afford to check some tokens ahead.
        """

    def full_mask(self) -> np.ndarray:
        """Bool array over the vocabulary: True where the token is allowed next."""

    def check(self, token_ids: np.ndarray) -> np.ndarray:
        """Bool array, one per id in token_ids: True where allowed next."""

    def accept(self, token: int) -> None:
        """Advance past a token that check/full_mask allowed."""

    def reset(self) -> None:
        """Back to the start of the grammar."""

    def close(self) -> None:
        """Free native resources."""


@dataclass(frozen=True, slots=True)
class BackendPlugin:
    """Where a backend lives, and what its setup needs from the caller."""

    module: str
    cls: str
    # True when the constructor takes `should_stop`: its setup can take long enough that
    # Stop must reach it (outlines-core's Index: seconds to minutes on a large vocabulary).
    stoppable: bool = False
    # What the window's status bar says while a run sets it up; None when that is quick.
    preparing: str | None = None


# One row per backend in engine.settings.BACKENDS; which grammars each runs is
# engine.settings.BACKEND_KINDS. Modules load on first use: each imports its native library.
PLUGINS: dict[str, BackendPlugin] = {
    "llguidance": BackendPlugin("engine.masking.llguidance", "LlguidanceBackend"),
    "llamacpp": BackendPlugin("engine.masking.llamacpp", "LlamaCppBackend"),
    "outlines": BackendPlugin(
        "engine.masking.outlines", "OutlinesBackend", True, "Building the Outlines index…"
    ),
    "xgrammar": BackendPlugin("engine.masking.xgrammar", "XGrammarBackend"),
}


def make_backend(
    name: str,
    model: Model,
    compiled: CompiledSchema,
    should_stop: Callable[[], bool] | None = None,
) -> MaskBackend:
    """`name`'s backend on `compiled`'s grammar. `should_stop()` returning True ends a long
    setup under way with LoadCancelled, where the backend's setup can be stopped."""
    plugin = PLUGINS.get(name)
    if plugin is None:
        raise GrammarError(f"unknown mask backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if (problem := pairing_problem(compiled.compiler, name) or missing_engine(name)) is not None:
        raise GrammarError(problem)
    cls = getattr(importlib.import_module(plugin.module), plugin.cls)
    if plugin.stoppable:
        return cls(model, compiled, should_stop)
    return cls(model, compiled)
