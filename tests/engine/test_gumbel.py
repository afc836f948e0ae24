"""The Gumbel-max draw of runs whose mask and noise are made during the forward pass."""

from __future__ import annotations

import numpy as np
import pytest

from engine.decode.gumbel import GumbelNoise


def draw_once(noise: GumbelNoise, z: np.ndarray, mask: np.ndarray) -> int:
    """One step as a run makes it: the noise for the mask, then the draw (z as the logits
    at T = 1)."""
    return noise.draw(z, np.float32(1.0), mask, noise.for_step(mask, int(mask.sum())))


def frequencies(noise: GumbelNoise, z: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    counts = np.zeros(len(z))
    for _ in range(n):
        counts[draw_once(noise, z, mask)] += 1
    return counts / n


def renormalised(z: np.ndarray, mask: np.ndarray) -> np.ndarray:
    p = np.exp(z.astype(np.float64) - z.max()) * mask
    return p / p.sum()


# Both ways a step gets its noise: a noise per valid token (small valid sets), and the J
# largest noises of the vocabulary with the rest drawn only where it could win (here J = 2,
# so that tokens outside the J win often).
REGIMES = [
    pytest.param({"small": 1_000_000}, id="own-noise"),
    pytest.param({"small": 0, "top_j": 2}, id="largest-J"),
]


@pytest.mark.parametrize("regime", REGIMES)
def test_draws_follow_the_renormalised_distribution(regime):
    probs = np.array([0.5, 0.2, 0.05, 0.25])  # the currency example: U, E, G allowed, x not
    mask = np.array([True, True, True, False])
    z = np.log(probs).astype(np.float32)
    freq = frequencies(GumbelNoise(len(probs), seed=1, temperature=1.0, **regime), z, mask, 20000)
    assert freq[3] == 0
    assert np.allclose(freq[:3], [0.667, 0.267, 0.067], atol=0.015)


@pytest.mark.slow
@pytest.mark.parametrize("regime", REGIMES)
def test_every_valid_token_is_drawn_as_often_as_its_probability(regime):
    rng = np.random.default_rng(7)
    z = (rng.standard_normal(40) * 1.5).astype(np.float32)
    mask = rng.random(40) < 0.75
    mask[np.argmax(z)] = False  # the top token is masked out, as a grammar often does
    n = 60000
    freq = frequencies(GumbelNoise(len(z), seed=3, temperature=1.0, **regime), z, mask, n)
    p = renormalised(z, mask)
    assert freq[~mask].sum() == 0
    sigma = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(freq - p) <= 5 * sigma + 1e-4)


@pytest.mark.parametrize("regime", REGIMES)
def test_an_invalid_token_never_wins_even_when_it_holds_all_the_mass(regime):
    # The valid pair lies 100 nats below the top: only the grammar keeps the top out.
    z = np.array([50.0, -50.0, -50.5], dtype=np.float32)
    mask = np.array([False, True, True])
    freq = frequencies(GumbelNoise(3, seed=0, temperature=1.0, **regime), z, mask, 4000)
    assert freq[0] == 0
    assert abs(freq[1] - renormalised(z, mask)[1]) < 0.04


def test_greedy_takes_the_first_most_probable_valid_token():
    noise = GumbelNoise(4, seed=0, temperature=0.0)
    z = np.array([5.0, 3.0, 4.0, 4.0], dtype=np.float32)
    assert draw_once(noise, z, np.array([False, True, True, True])) == 2
    assert draw_once(noise, z, np.array([True, True, True, True])) == 0


def test_noise_made_ahead_draws_what_noise_made_in_turn_draws():
    # A run beside the forward pass makes the next step's noise early (make_next); a run in
    # turn makes it when the step takes it. The seed alone must decide the draws, through
    # steps that switch between the two kinds of noise.
    rng = np.random.default_rng(11)
    n = 300
    ahead = GumbelNoise(n, seed=5, temperature=0.8, top_j=16, small=40)
    in_turn = GumbelNoise(n, seed=5, temperature=0.8, top_j=16, small=40)
    drawn: list[tuple[int, int]] = []
    for _ in range(200):
        z = (rng.standard_normal(n) * 2).astype(np.float32)
        mask = rng.random(n) < rng.choice([0.05, 0.9])
        mask[rng.integers(n)] = True
        ahead.make_next()
        drawn.append((draw_once(ahead, z, mask), draw_once(in_turn, z, mask)))
        ahead.make_next()  # as the helper does after the step's record
    assert all(a == b for a, b in drawn)
    assert len({a for a, _ in drawn}) > 50  # the draws do vary


@pytest.mark.parametrize("regime", [*REGIMES, pytest.param({"greedy": True}, id="greedy")])
def test_degenerate_logits_never_let_an_invalid_token_through(regime):
    # Every valid logit is -inf, and an invalid one is NaN: no race has a finite valid
    # winner, so the valid tokens are drawn uniformly (as the records' view counts them).
    z = np.array([0.0, -np.inf, np.nan, -np.inf], dtype=np.float32)
    mask = np.array([False, True, False, True])
    t = 0.0 if regime.pop("greedy", False) else 1.0
    noise = GumbelNoise(4, seed=2, temperature=t, **regime)
    drawn = {draw_once(noise, z, mask) for _ in range(200)}
    assert drawn == ({1} if t == 0.0 else {1, 3})
