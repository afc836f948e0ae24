"""Sampling by the Gumbel-max trick, with noise drawn only where it can change the winner.

argmax_i (z_i + G_i), with z = logits / T and G_i independent Gumbel(0, 1) noise, is an
exact draw from softmax(z); over the valid tokens only, it is a draw from the renormalised
distribution P(x) / sum P(valid). It needs no softmax, no normaliser and no sort, so it is
all the step waits for once the logits arrive.

Noise for the whole vocabulary would cost about 3 ms a step (262k float64 exponentials and
logs), more than a GPU's forward pass of a small model. So only the head, the valid tokens
with z >= max(z) - head_span, gets noise, and M is its best z + G. A tail token (z < t, the
head's bound) beats M only if its G > b = M - t. How many tail tokens have G > b is
Binomial(n_tail, q) with q = P(G > b); which ones is a uniform subset of the tail, and
their G is Gumbel conditioned on exceeding b. Every other tail token has z + G < t + b = M.
The winner is therefore among the head and that subset, and the draw stays exact. With the
default span, q is about e^-16: inside a JSON string a step drew noise for a median of
about 600 tokens (T = 0.7), and hardly ever for a tail token.
"""

from __future__ import annotations

import numpy as np

# A tail token's chance to join the race is about e^-span; e^-16 is about 1e-7.
HEAD_SPAN = 16.0


class GumbelSampler:
    """Exact draws among the valid tokens from scaled logits, in reused buffers."""

    def __init__(self, n_vocab: int, seed: int, head_span: float = HEAD_SPAN) -> None:
        self._rng = np.random.default_rng(seed)
        self._span = head_span
        self._above = np.empty(n_vocab, dtype=bool)

    def draw(self, z: np.ndarray, mask: np.ndarray, n_valid: int, greedy: bool) -> int:
        """A token id drawn from softmax(z) over `mask` (n_valid of them), or its argmax."""
        head, t = self._head(z, mask, float(z.max()))
        if len(head) == 0:  # every valid token lies far below the top: span from their best
            head, t = self._head(z, mask, float(np.max(z, where=mask, initial=-np.inf)))
        scores = z[head].astype(np.float64)
        if greedy:
            return int(head[np.argmax(scores)])
        scores += self._rng.gumbel(size=len(head))
        best = int(np.argmax(scores))
        winner, m = int(head[best]), float(scores[best])
        n_tail = n_valid - len(head)
        if n_tail <= 0:
            return winner
        q = float(-np.expm1(-np.exp(-(m - t))))  # P(G > b), exact for a large b too
        k = int(self._rng.binomial(n_tail, q))
        if k == 0:
            return winner
        # Rare (about n_tail * q of the steps), so the tail is listed only then.
        tail = np.flatnonzero(mask & ~self._above)
        ids = self._rng.choice(tail, size=k, replace=False)
        # G given G > b, by inverse CDF: 1 - F(G) is uniform on (0, q].
        w = q * (1.0 - self._rng.random(k))
        tail_scores = z[ids] - np.log(-np.log1p(-w))
        j = int(np.argmax(tail_scores))
        return int(ids[j]) if tail_scores[j] > m else winner

    def _head(self, z: np.ndarray, mask: np.ndarray, top: float) -> tuple[np.ndarray, float]:
        """Valid ids with z >= top - span, and that bound."""
        t = np.float32(top - self._span)  # the bound as z is compared with it, in float32
        np.greater_equal(z, t, out=self._above)
        ids = np.flatnonzero(self._above)
        return ids[mask[ids]], float(t)
