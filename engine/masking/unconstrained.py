"""The "no grammar" backend: every token is allowed, so a run under it is the model alone.

It exists for the comparison of a constrained run with an unconstrained one on the same
prompt and seed: both go through the same decode loop, so they differ only by the mask.
"""

from __future__ import annotations

import numpy as np


class AllowAll:
    name = "none"
    cheap_full_mask = True

    def __init__(self, n_vocab: int) -> None:
        self._mask = np.ones(n_vocab, dtype=bool)
        self._mask.flags.writeable = False  # shared by every step: nobody may edit it

    def prepare(self, likely: np.ndarray | None = None) -> None:
        pass

    def full_mask(self) -> np.ndarray:
        return self._mask

    def check(self, token_ids: np.ndarray) -> np.ndarray:
        return np.ones(len(token_ids), dtype=bool)

    def accept(self, token: int) -> None:
        pass

    def reset(self) -> None:
        pass

    def close(self) -> None:
        pass
