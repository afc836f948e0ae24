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

A model whose logits are spread (a random-weight one, or a high temperature) puts most of
the vocabulary in the head. NumPy's Gumbel noise costs about 16 ns a token (two libm logs
each: 4 ms for 262k), so a large head takes the same uniforms instead (rng.random draws the
very doubles rng.gumbel would), races them with float32 noise and error bounds, and
computes NumPy's exact noise only for the few tokens that bound leaves in the race: the
same winner, the same best score and the same generator state as rng.gumbel, so the same
record, in about a fifth of the time.
"""

from __future__ import annotations

import math

import numpy as np

# A tail token's chance to join the race is about e^-span; e^-16 is about 1e-7.
HEAD_SPAN = 16.0
# From this many head tokens on, the race runs on float32 noise first (_bulk_race).
_BULK = 4096
# float32 noise -log(-log1p(-u)) is within 1e-3 of the exact noise wherever it is at least
# _SURE (there 1 - u >= 5e-6, which float32's rounding of u moves by at most 0.6%); below
# it (u within 5e-6 of 1) the exact noise lies in [_G_FLOOR, _G_SURE_ABOVE], -3.61 at worst
# (u <= 1 - 2^-53).
_SURE, _G_FLOOR, _G_SURE_ABOVE, _G_ERR = -2.5, -3.7, -2.4, 2e-3


class GumbelSampler:
    """Exact draws among the valid tokens from scaled logits, in reused buffers."""

    def __init__(self, n_vocab: int, seed: int, head_span: float = HEAD_SPAN) -> None:
        self._rng = np.random.default_rng(seed)
        self._span = head_span
        self._above = np.empty(n_vocab, dtype=bool)
        self._u = np.empty(n_vocab, dtype=np.float64)
        self._g = np.empty(n_vocab, dtype=np.float32)
        self._score = np.empty(n_vocab, dtype=np.float32)

    def draw(self, z: np.ndarray, mask: np.ndarray, n_valid: int, greedy: bool) -> int:
        """A token id drawn from softmax(z) over `mask` (n_valid of them), or its argmax."""
        head, t = self._head(z, mask, float(z.max()))
        if len(head) == 0:  # every valid token lies far below the top: span from their best
            head, t = self._head(z, mask, float(np.max(z, where=mask, initial=-np.inf)))
        base = z[head]
        if greedy:  # float32 -> float64 is exact: the same argmax
            return int(head[np.argmax(base)])
        best, m = self._race(base)
        winner = int(head[best])
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

    def _race(self, base: np.ndarray) -> tuple[int, float]:
        """argmax of base + G with G = rng.gumbel(size=len(base)), and that score."""
        if len(base) >= _BULK:
            state = self._rng.bit_generator.state
            raced = self._bulk_race(base)
            if raced is not None:
                return raced
            self._rng.bit_generator.state = state  # replay as NumPy's own draw
        scores = base.astype(np.float64)
        scores += self._rng.gumbel(size=len(base))
        best = int(np.argmax(scores))
        return best, float(scores[best])

    def _bulk_race(self, base: np.ndarray) -> tuple[int, float] | None:
        """_race by float32 noise, then NumPy's exact noise for the tokens within its error
        of the best; None when a uniform is 0.0 (rng.gumbel would draw again: 1 in 2^53)."""
        n = len(base)
        # Reused buffers: fresh 1-2 MB arrays each step would cost their page faults too.
        u, g, score = self._u[:n], self._g[:n], self._score[:n]
        self._rng.random(out=u)  # the doubles rng.gumbel draws, in order
        if not u.all():
            return None
        np.negative(u, out=g)
        with np.errstate(divide="ignore"):  # u rounds to 1.0: noise -inf, an unsure one
            np.log1p(g, out=g)
            np.negative(g, out=g)
            np.log(g, out=g)
        np.negative(g, out=g)
        b_max, b_min = float(base.max()), float(base.min())
        err = _G_ERR + (max(abs(b_max), abs(b_min)) + 40.0) * 2.0**-22  # float32 sums' rounding
        np.add(base, g, out=score)
        # A lower bound on the best exact score: the top float32 score's, when its noise is
        # sure, and the top base's with the lowest noise.
        top = int(np.argmax(score))
        low = b_max + _G_FLOOR
        if g[top] >= np.float32(_SURE):
            low = max(low, float(score[top]) - err)
        np.maximum(g, np.float32(_G_SURE_ABOVE), out=g)  # an upper bound on every noise
        g += base
        near = np.flatnonzero(g >= np.float32(low - err))
        # NumPy's own formula (loc - scale * log(-log(1 - u))), in libm's log as NumPy's.
        exact = [
            float(base[i]) + (0.0 - 1.0 * math.log(-math.log(1.0 - float(u[i])))) for i in near
        ]
        j = int(np.argmax(exact))  # the first of equal scores, as over the whole head
        return int(near[j]), exact[j]

    def _head(self, z: np.ndarray, mask: np.ndarray, top: float) -> tuple[np.ndarray, float]:
        """Valid ids with z >= top - span, and that bound."""
        t = np.float32(top - self._span)  # the bound as z is compared with it, in float32
        np.greater_equal(z, t, out=self._above)
        np.logical_and(self._above, mask, out=self._above)  # the tail stays mask & ~above
        return np.flatnonzero(self._above), float(t)
