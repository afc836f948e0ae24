"""Sampling by the Gumbel-max trick: after the forward pass, one subtraction and an argmax.

argmax_i (z_i + G_i), with z = logits / T and G_i independent Gumbel(0, 1) noise, is an
exact draw from softmax(z). Leaving out the invalid tokens makes it a draw from the
renormalised distribution P(x) / sum P(valid). The noise and the mask depend only on the
tokens so far, never on the logits, so both are made while the forward pass runs; what is
left for after it has no softmax, no sort and no normaliser.

G = -log E with E ~ Exp(1), drawn in float64 (a zero E, which would make its token win
whatever its logit, has odds of about 2^-53). An invalid token gets E = inf, so it can never
win. The final sum is float32: one rounding (at most ~4e-6 for |z + G| < 64), which moves a
token's chance by a few parts per million at most.
"""

from __future__ import annotations

import numpy as np


class GumbelDraw:
    """Prepared offsets log E (inf where invalid) for the next draw, in reused buffers."""

    def __init__(self, n_vocab: int, seed: int) -> None:
        self._rng = np.random.default_rng(seed)
        self._e = np.empty(n_vocab, dtype=np.float64)
        self._valid = np.empty(n_vocab, dtype=np.float64)
        self._log_e = np.empty(n_vocab, dtype=np.float32)
        self._sum = np.empty(n_vocab, dtype=np.float32)

    def prepare(self, mask: np.ndarray, greedy: bool) -> None:
        """Offsets for a draw among the tokens in `mask`; greedy means no noise."""
        e = self._e
        if greedy:
            e.fill(1.0)
        else:
            self._rng.standard_exponential(out=e, method="zig")
        np.copyto(self._valid, mask)
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(e, self._valid, out=e)  # E / 0 = inf: invalid tokens never win
        np.log(e, out=e)
        np.copyto(self._log_e, e, casting="same_kind")

    def draw(self, scaled_logits: np.ndarray) -> int:
        """argmax(z - log E) = argmax(z + G): the sampled token id."""
        np.subtract(scaled_logits, self._log_e, out=self._sum)
        return int(np.argmax(self._sum))
