"""Sampling by the Gumbel-max trick, with the noise made before the logits arrive.

argmax_i (z_i + G_i) over the valid tokens, with z = logits / T and G_i independent
Gumbel(0, 1) noise, is an exact draw from the renormalised distribution P(x) / sum P(valid).
The noise depends on nothing a step computes, and the mask only on the grammar state, so
both are made while the forward pass runs (engine/decode/overlap.py); when the logits
arrive, the draw is a few passes over small arrays.

Noise for the whole vocabulary would cost about a millisecond a step (262k doubles and two
logs each), as much as a GPU's forward pass of a small model. So the noise is made in the
order it matters, largest first:

- A small valid set (structural positions, enum letters) gets a Gumbel of its own per
  valid token.
- Otherwise the J largest noises of the vocabulary are made, with the tokens they fall on.
  For N i.i.d. Exp(1) variates E (G = -log E), the J smallest are, by Renyi's
  representation, E_(k) = sum_{i <= k} X_i / (N - i + 1) with X_i ~ Exp(1), and the tokens
  that hold them are a uniform random ordered sample of J tokens. Every other token's E is
  E_(J) + X, X ~ Exp(1), again independent (memorylessness), so its G is below G_(J).
  When the logits arrive, the best valid score b among the J is found; a token outside them
  can beat b only if z > b - G_(J). Those few (usually a handful, often none) get their
  E_(J) + X now.

Every draw uses float64 noise, so the draw is exact to double precision. The noise comes
from generators of the run's own (seeded from its seed), each used in a fixed order: the
draws depend on the seed alone, never on when the noise was made, so a step made beside the
forward pass draws what the same step made in turn draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.random import SeedSequence, default_rng  # at import: see stepper.py

from engine.decode.distribution import BLOCK, ids_in_blocks

# How many of the largest noises are made ahead. Over a random-weight model's spread logits
# at T = 0.7 (the hardest case), the tokens outside them that could still win were a median
# of 3 a step (none on 38% of steps), and 4,096 gave the shortest step of 512 to 16,384.
TOP = 4096
# Valid sets up to this size get a noise per valid token instead.
SMALL = 4096


@dataclass(frozen=True, slots=True)
class StepNoise:
    """One step's noise, made before its logits."""

    ids: np.ndarray  # the valid set (small), or the tokens with the J largest noises, in order
    gumbel: np.ndarray  # their G (float64); -inf on the J's invalid tokens
    e_floor: float  # E_(J): every token not among the J has E above it (0 when unused)
    in_top: np.ndarray | None  # per token: among the J


class GumbelNoise:
    """One run's noise, and the draw that uses it."""

    def __init__(
        self, n_vocab: int, seed: int, temperature: float, top_j: int = TOP, small: int = SMALL
    ) -> None:
        top, own, rest = SeedSequence(seed).spawn(3)
        self._top_rng = default_rng(top)  # the J largest, in order
        self._own_rng = default_rng(own)  # small valid sets' own noise
        self._rest_rng = default_rng(rest)  # tokens outside the J that could win
        self._n = n_vocab
        self._inv_t = 1.0 / temperature if temperature > 0 else 0.0
        self._j = min(top_j, n_vocab)
        self._small = small
        self._share = 1.0 / (n_vocab - np.arange(self._j, dtype=np.float64))  # 1 / (N - i + 1)
        # Two membership arrays in turn: a step draws with one while the next is made.
        self._in_top = [np.zeros(n_vocab, dtype=bool) for _ in range(2)]
        self._held: list[np.ndarray | None] = [None, None]  # the ids each one marks
        self._slot = 0
        self._next: StepNoise | None = None  # the next J, made and not yet taken

    @property
    def greedy(self) -> bool:
        return self._inv_t == 0.0

    def make_next(self) -> None:
        """The next J largest noises, made now (beside a forward pass) rather than when
        a step takes them."""
        if self._next is not None or self.greedy:
            return
        ids = self._top_rng.choice(self._n, self._j, replace=False)  # uniform, in order
        e = np.cumsum(self._top_rng.standard_exponential(self._j) * self._share)
        in_top, held = self._in_top[self._slot], self._held[self._slot]
        if held is not None:
            in_top[held] = False
        in_top[ids] = True
        self._held[self._slot] = ids
        self._slot ^= 1
        by_id = np.argsort(ids)  # the step reads the logits at them in memory order
        self._next = StepNoise(ids[by_id], -np.log(e[by_id]), float(e[-1]), in_top)

    def for_step(self, mask: np.ndarray, n_valid: int) -> StepNoise | None:
        """This step's noise for its mask; None when greedy (no noise)."""
        if self.greedy:
            return None
        if n_valid <= self._small:
            ids = np.flatnonzero(mask)
            return StepNoise(ids, self._own_rng.gumbel(size=len(ids)), 0.0, None)
        self.make_next()
        top, self._next = self._next, None
        assert top is not None
        gumbel = np.where(mask[top.ids], top.gumbel, -np.inf)
        return StepNoise(top.ids, gumbel, top.e_floor, top.in_top)

    def draw(
        self, logits: np.ndarray, inv_t: np.float32, mask: np.ndarray, noise: StepNoise | None
    ) -> int:
        """argmax over the valid tokens of z + G, z = logits * inv_t in float32 as the
        record's z (Distribution.scale): a draw from softmax(z) over `mask`. With no noise,
        the first most probable valid token. Reads llama.cpp's logits where they lie."""
        if noise is None:  # greedy: z is the logits themselves
            token = int(np.argmax(logits))
            if not mask[token]:
                token = int(np.argmax(np.where(mask, logits, -np.inf)))
            return token if mask[token] else self._degenerate(logits, inv_t, mask)
        scores = (logits[noise.ids] * inv_t).astype(np.float64) + noise.gumbel
        j = int(np.argmax(scores))
        token, best = int(noise.ids[j]), float(scores[j])
        if noise.in_top is not None:
            token, best = self._outside(logits, inv_t, mask, noise, token, best)
        if mask[token] and best > -np.inf:  # NaN fails the comparison too
            return token
        return self._degenerate(logits, inv_t, mask)

    def _degenerate(self, logits: np.ndarray, inv_t: np.float32, mask: np.ndarray) -> int:
        """A draw when the race found no valid token with a finite score: the valid logits
        are all -inf, or NaN somewhere won. The valid tokens with a finite z race alone;
        with none, a logit of -inf counts as the lowest finite one (as in the records'
        view, Distribution._deep_view), so the valid tokens are drawn uniformly (greedy:
        the first)."""
        valid = np.flatnonzero(mask)
        z = (logits[valid] * inv_t).astype(np.float64)
        finite = np.isfinite(z)
        if not finite.any():
            return int(valid[0 if self.greedy else self._rest_rng.integers(len(valid))])
        if not self.greedy:
            z[finite] += self._rest_rng.gumbel(size=int(finite.sum()))
        return int(valid[finite][np.argmax(z[finite])])

    def _outside(
        self,
        logits: np.ndarray,
        inv_t: np.float32,
        mask: np.ndarray,
        noise: StepNoise,
        token: int,
        best: float,
    ) -> tuple[int, float]:
        """The winner and its score once the tokens outside the J that could beat `best`
        have their noise."""
        assert noise.in_top is not None
        bound = best + float(np.log(noise.e_floor))  # b - G_(J): z above it could win
        # float32's bound rounded down: a token too many only draws a noise that cannot win.
        low = np.nextafter(np.float32(bound), np.float32(-np.inf))
        near = _z_at_least(logits, inv_t, low)
        near = near[mask[near] & ~noise.in_top[near]]
        if len(near) == 0:
            return token, best
        e = noise.e_floor + self._rest_rng.standard_exponential(len(near))
        scores = (logits[near] * inv_t).astype(np.float64) - np.log(e)
        k = int(np.argmax(scores))
        return (int(near[k]), float(scores[k])) if scores[k] > best else (token, best)


_FEW_BLOCKS = 4  # beyond this many blocks to search, one comparison of all z is faster


def _z_at_least(logits: np.ndarray, inv_t: np.float32, low: np.floating) -> np.ndarray:
    """Ids whose z = logits * inv_t is at least `low`, in order: block maxima first (float32
    rounding keeps order, so a block's largest z is its largest logit's), then only the
    blocks that reach it (usually none: one short pass where a whole one would take three)."""
    whole = len(logits) // BLOCK * BLOCK
    blocks = logits[:whole].reshape(-1, BLOCK)
    reached = np.flatnonzero(blocks.max(axis=1) * inv_t >= low)
    if len(reached) > _FEW_BLOCKS:
        return np.flatnonzero(logits * inv_t >= low)
    ids = ids_in_blocks(blocks, reached, lambda v: v * inv_t >= low)
    return np.concatenate([ids, whole + np.flatnonzero(logits[whole:] * inv_t >= low)])
