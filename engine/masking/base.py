"""The seam every mask backend fits behind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from engine.errors import GrammarError
from engine.settings import ENGINE_BACKENDS

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


def make_backend(name: str, model: Model, compiled: CompiledSchema) -> MaskBackend:
    if name == "outlines":
        from engine.masking.outlines import OutlinesBackend

        return OutlinesBackend(model, compiled)
    if compiled.outlines_regex is not None:
        raise GrammarError("the outlines compiler's regex runs on the outlines backend only")
    if name == "llamacpp":
        if compiled.llguidance_grammar is not None:
            raise GrammarError(
                "the llguidance compiler's grammar runs on the llguidance backend only"
            )
        from engine.masking.llamacpp import LlamaCppBackend

        return LlamaCppBackend(model, compiled)
    if name == "llguidance":
        from engine.masking.llguidance import LlguidanceBackend

        return LlguidanceBackend(model, compiled)
    choices = ", ".join(ENGINE_BACKENDS)
    raise GrammarError(f"unknown mask backend {name!r}; choose one of {choices}")
