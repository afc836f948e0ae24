"""The Gumbel-max draw used when the mask is made during the forward pass."""

from __future__ import annotations

import numpy as np

from engine.gumbel import GumbelDraw


def test_draws_follow_the_renormalised_distribution():
    probs = np.array([0.5, 0.2, 0.05, 0.25])  # the currency example: U, E, G allowed, x not
    mask = np.array([True, True, True, False])
    z = np.log(probs).astype(np.float32)
    draw = GumbelDraw(len(probs), seed=1)
    counts = np.zeros(4)
    for _ in range(20000):
        draw.prepare(mask, greedy=False)
        counts[draw.draw(z)] += 1
    assert counts[3] == 0
    assert np.allclose(counts[:3] / 20000, [0.667, 0.267, 0.067], atol=0.015)


def test_an_invalid_token_never_wins_even_when_it_holds_all_the_mass():
    z = np.array([50.0, -50.0, -60.0], dtype=np.float32)
    draw = GumbelDraw(3, seed=0)
    for _ in range(2000):
        draw.prepare(np.array([False, True, True]), greedy=False)
        assert draw.draw(z) in (1, 2)


def test_greedy_takes_the_most_probable_valid_token():
    draw = GumbelDraw(3, seed=0)
    draw.prepare(np.array([False, True, True]), greedy=True)
    assert draw.draw(np.array([5.0, 3.0, 4.0], dtype=np.float32)) == 2
