"""The Gumbel-max draw used when the mask is made during the forward pass."""

from __future__ import annotations

import numpy as np
import pytest

from engine.decode.gumbel import GumbelSampler


def _frequencies(sampler: GumbelSampler, z: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    n_valid = int(mask.sum())
    counts = np.zeros(len(z))
    for _ in range(n):
        counts[sampler.draw(z, mask, n_valid, greedy=False)] += 1
    return counts / n


def _renormalised(z: np.ndarray, mask: np.ndarray) -> np.ndarray:
    p = np.exp(z.astype(np.float64) - z.max()) * mask
    return p / p.sum()


def test_draws_follow_the_renormalised_distribution():
    probs = np.array([0.5, 0.2, 0.05, 0.25])  # the currency example: U, E, G allowed, x not
    mask = np.array([True, True, True, False])
    z = np.log(probs).astype(np.float32)
    freq = _frequencies(GumbelSampler(len(probs), seed=1), z, mask, 20000)
    assert freq[3] == 0
    assert np.allclose(freq[:3], [0.667, 0.267, 0.067], atol=0.015)


@pytest.mark.slow
def test_tail_tokens_are_drawn_as_often_as_their_probability():
    # A span of 1 puts most valid tokens in the tail, so the binomial race decides most
    # draws: the frequencies must still match P renormalised over the valid set.
    rng = np.random.default_rng(7)
    z = (rng.standard_normal(40) * 1.5).astype(np.float32)
    mask = rng.random(40) < 0.75
    mask[np.argmax(z)] = False  # the top token is masked out, as a grammar often does
    n = 60000
    freq = _frequencies(GumbelSampler(len(z), seed=3, head_span=1.0), z, mask, n)
    p = _renormalised(z, mask)
    assert (z[mask] < z.max() - 1.0).sum() > 20  # the tail holds most valid tokens
    assert freq[~mask].sum() == 0
    sigma = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(freq - p) <= 5 * sigma + 1e-4)


def test_an_invalid_token_never_wins_even_when_it_holds_all_the_mass():
    # The valid pair lies 100 nats below the top, out of its head span: the head is then
    # spanned from the best valid token instead.
    z = np.array([50.0, -50.0, -50.5], dtype=np.float32)
    mask = np.array([False, True, True])
    freq = _frequencies(GumbelSampler(3, seed=0), z, mask, 4000)
    assert freq[0] == 0
    assert abs(freq[1] - _renormalised(z, mask)[1]) < 0.04


def test_greedy_takes_the_most_probable_valid_token():
    sampler = GumbelSampler(3, seed=0)
    z = np.array([5.0, 3.0, 4.0], dtype=np.float32)
    assert sampler.draw(z, np.array([False, True, True]), 2, greedy=True) == 2
