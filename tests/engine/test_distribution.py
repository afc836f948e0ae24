"""Renormalisation and sampling maths on small, hand-made distributions."""

from __future__ import annotations

import numpy as np

from engine.decode.distribution import Distribution


def _dist(logits: list[float], temperature: float = 1.0) -> Distribution:
    d = Distribution(len(logits))
    d.update(np.asarray(logits, dtype=np.float32), temperature)
    return d


def test_softmax_sums_to_one_and_entropy_matches():
    d = _dist([2.0, 1.0, 0.5, -3.0])
    p = d.p.astype(np.float64)
    assert abs(p.sum() - 1.0) < 1e-6
    assert abs(d.entropy - float(-(p * np.log(p)).sum())) < 1e-5


def test_renormalisation_keeps_ratios_as_in_the_worked_example():
    # The comma / brace example: P(,)=0.30 and P(})=0.10 out of the mass; the rest is invalid.
    probs = np.array([0.30, 0.10, 0.35, 0.25])
    d = _dist(np.log(probs).tolist())
    mask = np.array([True, True, False, False])
    view = d.mask_full(mask, 4)
    assert abs(view.valid_mass - 0.40) < 1e-6
    masked = view.p_valid_sorted / view.valid_mass
    assert np.allclose(masked, [0.75, 0.25], atol=1e-6)
    assert list(view.valid_sorted) == [0, 1]


def test_head_check_bounds_the_unchecked_mass():
    rng = np.random.default_rng(0)
    d = _dist((rng.normal(size=5000) * 4).tolist())
    order, tail = d.head(1e-6, 10)
    assert tail <= 1e-6
    p = d.p.astype(np.float64)
    assert abs(tail - (p.sum() - p[order].sum())) < 2e-7  # float32 rounding of P
    left_out = np.delete(p, order)
    assert left_out.size == 0 or p[order].min() >= left_out.max()  # it keeps the likeliest


def test_sampling_follows_the_masked_distribution():
    probs = np.array([0.5, 0.2, 0.05, 0.25])  # the currency example: U, E, G allowed, x not
    d = _dist(np.log(probs).tolist())
    view = d.mask_full(np.array([True, True, True, False]), 4)
    rng = np.random.default_rng(1)
    draws = np.bincount([d.sample(view, rng.random()) for _ in range(20000)], minlength=4)
    assert draws[3] == 0
    assert np.allclose(draws[:3] / 20000, [0.667, 0.267, 0.067], atol=0.015)


def test_sampling_reaches_valid_tokens_beyond_the_head():
    # Token 0 holds almost all the mass and is invalid; the 10,000 valid tokens share the
    # tail equally. That is more than are ranked outright, so only the top 4 are ranked and
    # nearly every draw lands past them, where block sums must find it.
    n, first_valid = 12_000, 2_000
    logits = np.full(n, -20.0, dtype=np.float32)
    logits[0] = 10.0
    d = _dist(logits.tolist())
    mask = np.zeros(n, dtype=bool)
    mask[first_valid:] = True
    view = d.mask_full(mask, 4)
    assert len(view.valid_sorted) == 4 and view.rest_in_pv  # the premise: most are unranked
    us = np.linspace(0.01, 0.999, 50)
    picks = [d.sample(view, float(u)) for u in us]
    # Equal probabilities: the draw at u is the token u of the way along the walk (the
    # 4 ranked tokens first, then the rest in id order), give or take those 4.
    for u, token in zip(us, picks, strict=True):
        assert mask[token]
        assert abs(token - (first_valid + u * (n - first_valid))) <= 5, (u, token)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def test_p_is_the_softmax_of_the_logits_over_t():
    logits = np.array([2.0, 1.0, 0.5, -3.0, 0.0])
    for t in (0.5, 2.0):
        d = _dist(logits.tolist(), temperature=t)
        expected = _softmax(logits / t)
        assert np.allclose(d.p, expected, rtol=1e-5, atol=1e-7), t
        assert abs(d.entropy - float(-(expected * np.log(expected)).sum())) < 1e-5


def test_sampling_at_a_temperature_follows_the_tempered_masked_distribution():
    # At T = 0.5, P is proportional to the T = 1 probabilities squared.
    probs = np.array([0.5, 0.2, 0.05, 0.25])
    d = _dist(np.log(probs).tolist(), temperature=0.5)
    view = d.mask_full(np.array([True, True, True, False]), 4)
    rng = np.random.default_rng(1)
    draws = np.bincount([d.sample(view, rng.random()) for _ in range(20000)], minlength=4)
    expected = probs[:3] ** 2 / (probs[:3] ** 2).sum()  # 0.855, 0.137, 0.009
    assert draws[3] == 0
    assert np.allclose(draws[:3] / 20000, expected, atol=0.01)


def test_greedy_takes_the_most_probable_valid_token():
    d = _dist([5.0, 4.0, 3.0])
    view = d.mask_full(np.array([False, True, True]), 3)
    assert d.sample(view, None) == 1


def _big(seed: int, n: int = 50_000) -> tuple[Distribution, np.ndarray]:
    """A vocabulary-sized case: flat logits, most tokens valid, as inside a JSON string."""
    rng = np.random.default_rng(seed)
    d = _dist((rng.normal(size=n) * 1.5).tolist(), temperature=0.7)
    return d, rng.random(n) < 0.9


def test_top_k_matches_a_full_sort():
    d, mask = _big(2)
    p = d.p.astype(np.float64)
    assert list(d.top_raw(10)) == list(np.argsort(-p, kind="stable")[:10])
    view = d.mask_full(mask, 10)
    valid_ids = np.flatnonzero(mask)
    expected = valid_ids[np.argsort(-p[valid_ids], kind="stable")[:10]]
    assert list(view.valid_sorted) == list(expected)
    assert view.n_valid == int(mask.sum()) and view.n_valid_exact
    assert abs(view.valid_mass - p[mask].sum()) < 1e-6
    # The top value tied across blocks: ten distinct ids that hold it.
    tied = _dist(np.repeat([1.0, 3.0, 2.0], 4000).tolist()).top_raw(10)
    assert len(set(tied.tolist())) == 10 and all(4000 <= i < 8000 for i in tied)


def test_sampling_a_large_valid_set_past_its_ranked_top_is_exact():
    # The ranked top-3 holds a small share of the valid mass, so most draws land past it.
    d, mask = _big(3, n=6000)
    view = d.mask_full(mask, 3)
    p = np.where(mask, d.p.astype(np.float64), 0.0)
    p /= p.sum()
    # Draw at the midpoint of every token's interval in the sampler's own walk order:
    # each token must come back exactly once.
    order = list(view.valid_sorted) + [t for t in np.flatnonzero(p) if t not in view.valid_sorted]
    cum = np.cumsum(p[order])
    mids = cum - p[order] / 2
    drawn = [d.sample(view, float(u)) for u in mids[::37]]
    assert drawn == order[::37]
    assert all(mask[t] for t in (d.sample(view, u) for u in (0.0, 0.5, 0.999999999)))


def test_head_is_close_to_the_smallest_that_bounds_the_tail():
    # Flat logits, as inside a JSON string: the head is large, and every token in it costs
    # a grammar check, so it must not hold many more tokens than the bound needs.
    d, _ = _big(4, n=200_000)
    order, tail = d.head(1e-6, 10)
    p = np.sort(d.p.astype(np.float64))[::-1]
    smallest = int(np.searchsorted(np.cumsum(p), 1.0 - 1e-6)) + 1
    assert tail <= 1e-6
    assert abs(tail - (1.0 - d.p[order].sum(dtype=np.float64))) < 1e-12
    assert smallest <= len(order) <= 1.1 * smallest + 10
