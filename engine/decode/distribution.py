"""One step's numbers: the raw distribution, its probable head, masking and sampling.

Everything is vectorised over the vocabulary and reuses its buffers between
steps. Nothing sorts the whole vocabulary: the top-K comes from block maxima, the
head (the most probable tokens holding all but a tiny tail of the mass) from
thresholds, and a draw from block sums.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_EXP_FLOOR = np.float32(-87.0)
# Up to this many valid tokens are ranked outright; beyond, only their top-K is.
_SMALL_VALID_SET = 4096
# Per-token arrays are padded to whole blocks: block maxima bound the top-K and block sums
# locate a draw, each in one cheap pass over the vocabulary.
BLOCK = 1024
# Log-spaced bins for tightening the head between two thresholds 100x apart: each spans a
# factor 100^(1/64), about 1.07.
_TIGHTEN_BINS = 64
# Below this valid mass, float32 P cannot tell the valid tokens apart: each one under the
# floor gets exp(-87) / Z, so a draw from P would be uniform among them (a grammar that masks
# the top at a low temperature: at T = 0.05, 4.4 logits below it are 87 nats). P' then
# comes from z itself. Above it, the floor's share of the valid mass is under 1e-12.
_DEEP_MASS = 1e-20


@dataclass(slots=True)
class MaskedView:
    """The valid set as far as it was checked, with exact bounds."""

    valid_sorted: np.ndarray  # valid token ids, most probable first (checked ones only)
    p_valid_sorted: np.ndarray  # their raw probabilities (float64)
    valid_mass: float  # exact, or a lower bound short by at most `mass_bound`
    mass_bound: float
    n_valid: int  # exact when n_valid_exact, else a lower bound
    n_valid_exact: bool
    full_mask: np.ndarray | None  # the whole mask, when it was computed
    head_ok: np.ndarray | None = None  # without a full mask: validity of the top of P, in order
    rest_in_pv: bool = False  # the unranked valid tokens' P sits in the Distribution's pv
    # When P underflows on the valid set (below _DEEP_MASS): the best valid z and the sum
    # of exp(z - it) over the valid set. Every valid token is then ranked, and
    # P'(x) = exp(z_x - best) / sum, from z, not from P (exact at any scale of z).
    deep: tuple[float, float] | None = None


def inverse_temperature(temperature: float) -> float:
    """1 / T, the logits' scale; greedy runs (T = 0) are scaled as at T = 1."""
    return 1.0 / temperature if temperature > 0 else 1.0


class Distribution:
    """softmax(logits / T) over the full vocabulary, in reused buffers."""

    def __init__(self, n_vocab: int) -> None:
        self.n = n_vocab
        padded = -(-n_vocab // BLOCK) * BLOCK
        self._p_padded = np.zeros(padded, dtype=np.float32)  # the padding stays 0
        self.p = self._p_padded[:n_vocab]
        self._pv_padded = np.zeros(padded, dtype=np.float32)  # P on the valid set, 0 elsewhere
        self._mask_f32 = np.empty(n_vocab, dtype=np.float32)
        self._scaled = np.empty(n_vocab, dtype=np.float32)
        self._clipped = np.empty(n_vocab, dtype=np.float32)  # z - max(z), clipped for exp()
        self._log_z = 0.0
        self._p_max = 1.0
        self._inv_t = 1.0
        self._z_max = 0.0  # what normalise() shifted z by
        self._top: np.ndarray | None = None  # this step's ranked top, when known
        self.last_head = np.empty(0, dtype=np.intp)  # ids of the last head() found
        self._head_thr = 0.0  # the threshold (a probability) the last head() settled on

    def update(self, logits: np.ndarray, temperature: float) -> None:
        """scale() then normalise(): P for this step's logits."""
        self.scale(logits, temperature)
        self.normalise()

    def scale(self, logits: np.ndarray, temperature: float) -> None:
        """z = logits / T, copied out of llama.cpp's buffer (the next forward pass reuses it).

        Greedy runs (T = 0) show the distribution at T = 1.
        """
        inv_t = inverse_temperature(temperature)
        np.multiply(logits, np.float32(inv_t), out=self._scaled)
        self._inv_t = inv_t
        self._top = None

    @property
    def scaled(self) -> np.ndarray:
        """z = logits / T after scale(), until normalise() shifts it by its maximum."""
        return self._scaled

    def normalise(self) -> None:
        """P = softmax(z): five passes over the vocabulary. z stays unclipped (shifted by
        its maximum), for the valid sets P cannot resolve."""
        scaled = self._scaled
        self._z_max = float(scaled.max())
        scaled -= np.float32(self._z_max)
        # exp() of anything below -87 underflows float32 and takes NumPy's slow path (2.5x);
        # those tokens' probabilities are below 1e-38 either way.
        np.clip(scaled, _EXP_FLOOR, np.float32(0.0), out=self._clipped)
        np.exp(self._clipped, out=self.p)
        z = float(self.p.sum())  # NumPy sums float32 pairwise: ~1e-7 relative error
        self.p *= np.float32(1.0 / z)
        self._log_z = float(np.log(z))
        self._p_max = 1.0 / z  # the maximum logit maps to exp(0) = 1

    def logits_of(self, ids: np.ndarray) -> np.ndarray:
        """The raw logits of `ids` after normalise(), recovered from z so no copy of the
        logits is kept; exact to float32 rounding except where P underflowed to 0."""
        return (self._scaled[ids].astype(np.float64) + self._z_max) / self._inv_t

    @property
    def entropy(self) -> float:
        """Of the raw distribution, in nats: H = log Z - sum p (l/T - max)."""
        # z - max(z) is at most 0, so clipping it only floored it.
        return self._log_z - float(np.dot(self.p, self._clipped))

    def head(self, tail_eps: float, min_count: int) -> tuple[np.ndarray, float]:
        """Token ids (in no particular order) whose complement holds at most `tail_eps` of
        the mass, and that mass (exact up to float32 rounding of P, about 1e-7).

        Thresholds on P find them in a few passes; nothing is sorted.
        """
        p = self.p
        top = self._p_max * 1e-3
        # Start where the last head ended: successive steps (a string's characters) need
        # thresholds alike, so two passes usually bracket it where five did from the top.
        thr = min(self._head_thr, top) if self._head_thr > 0.0 else top
        above: float | None = None  # the lowest threshold tried that left too much out
        passed: tuple[float, np.ndarray, float] | None = None  # the highest that did not
        while True:
            idx = np.flatnonzero(p >= thr)
            tail = 1.0 - float(p[idx].sum(dtype=np.float64))
            if (tail <= tail_eps and len(idx) >= min_count) or len(idx) == self.n:
                passed = (thr, idx, tail)
                if above is not None or thr >= top or thr == 0.0:
                    break
                thr = min(thr * 1e2, top)  # a smaller head saves more checks than a pass costs
            else:
                above = thr
                if passed is not None:
                    break
                thr = thr * 1e-2 if thr > 1e-30 else 0.0
        thr, idx, tail = passed
        self._head_thr = thr
        if above is not None and thr > 0.0 and len(idx) > min_count:
            idx, tail = _tighten(p, idx, tail, thr, above, tail_eps, min_count)
        self.last_head = idx
        return idx, max(tail, 0.0)

    def top_raw(self, k: int) -> np.ndarray:
        """The k most probable token ids, most probable first."""
        if self._top is None or len(self._top) < k:
            self._top = _top_k(self._p_padded, k)
        return self._top[:k]

    # -- masking --------------------------------------------------------------------

    def mask_full(self, mask: np.ndarray, k: int, n_valid: int | None = None) -> MaskedView:
        """Exact view from a full-vocabulary bool mask; at least the top `k` valid are ranked.

        `n_valid`, the mask's count, when the caller already has it.
        """
        p = self.p
        if n_valid is None:
            n_valid = int(np.count_nonzero(mask))
        if n_valid <= _SMALL_VALID_SET:
            # Structural positions ({, ", :, enum letters): rank the whole valid set.
            ids = np.flatnonzero(mask)
            order = ids[np.argsort(-p[ids], kind="stable")]
            pv = p[order].astype(np.float64)
            if n_valid and pv.sum() < _DEEP_MASS:  # none valid: the caller's to report
                return self._deep_view(ids, mask)
            return MaskedView(order, pv, float(pv.sum()), 0.0, n_valid, True, mask)
        # A large valid set (inside a string, most of the vocabulary): P times the mask as
        # float32, since boolean indexing costs 20x as much. Summed in float64, so that the
        # sampler's intervals add up to exactly this mass.
        np.copyto(self._mask_f32, mask)
        pv = self._pv_padded
        np.multiply(p, self._mask_f32, out=pv[: self.n])
        valid_mass = float(pv.sum(dtype=np.float64))
        if valid_mass < _DEEP_MASS:
            return self._deep_view(np.flatnonzero(mask), mask)
        top = _top_k(pv, k)  # only the top is ranked; a draw past it uses pv's block sums
        pv_top = p[top].astype(np.float64)
        return MaskedView(top, pv_top, valid_mass, 0.0, n_valid, True, mask, rest_in_pv=True)

    def mask_head(
        self, check: Callable[[np.ndarray], np.ndarray], tail_eps: float, k: int
    ) -> MaskedView:
        """View from checking only the head: valid mass exact to within `tail_eps`.

        Only the top k of the head, and of its valid part, are ranked: a draw walks the
        valid tokens in any fixed order and stays exact.
        """
        idx, tail = self.head(tail_eps, k)
        ok = check(idx)
        p = self.p
        top = _top_positions(p[idx], k)
        self._top = idx[top]  # top_raw() of this step
        valid = idx[ok]
        pv = p[valid]
        first = _top_positions(pv, k)
        rest = np.ones(len(valid), dtype=bool)
        rest[first] = False
        order = np.concatenate([valid[first], valid[rest]])
        pv_order = np.concatenate([pv[first], pv[rest]]).astype(np.float64)
        exact = len(idx) == self.n  # only when the whole vocabulary was checked
        if exact and len(valid) and pv_order.sum() < _DEEP_MASS:
            view = self._deep_view(np.sort(valid), None)
            view.head_ok = ok[top]
            return view
        return MaskedView(
            order, pv_order, float(pv_order.sum()), tail, len(valid), exact, None, ok[top]
        )

    def _deep_view(self, ids: np.ndarray, mask: np.ndarray | None) -> MaskedView:
        """Every valid token ranked by z, P' from z: P is float32's floor on all of them.

        Rare (a costly sort of a valid set that may be large): only when P' is not P/ΣP(V)
        in float32. A logit of -inf counts as the lowest finite z, so a valid set of only
        those is drawn uniformly rather than not at all.
        """
        z = np.maximum(self._scaled[ids].astype(np.float64), -1e300)
        rank = np.argsort(-z, kind="stable")
        order, z = ids[rank], z[rank]
        total = float(np.exp(z - z[0]).sum())
        pv = np.exp(z - self._log_z)  # the true P in float64, for the records
        mass = float(pv.sum())
        return MaskedView(order, pv, mass, 0.0, len(ids), True, mask, deep=(float(z[0]), total))

    def p_masked(self, ids: np.ndarray, view: MaskedView) -> np.ndarray:
        """P'(x) = P(x) / ΣP(V) of valid `ids` (float64)."""
        if view.deep is not None:
            best, total = view.deep
            z = np.maximum(self._scaled[ids].astype(np.float64), -1e300)
            return np.exp(np.minimum(z - best, 0.0)) / total  # an invalid top: not above 1
        mass = view.valid_mass if view.valid_mass > 0 else 1.0
        return self.p[ids].astype(np.float64) / mass

    def valid_flags(self, ids: np.ndarray, view: MaskedView) -> np.ndarray:
        """Validity of `ids`, which must be the top of P (as top_raw gives them)."""
        if view.full_mask is not None:
            return view.full_mask[ids]
        # mask_head checked these very ids and kept their verdicts in this order.
        return view.head_ok[: len(ids)]

    # -- sampling -------------------------------------------------------------------

    def sample(self, view: MaskedView, u: float | None) -> int:
        """Exact inverse-CDF draw from P restricted to the valid set; None means greedy.

        The ranked valid tokens are walked first, then the rest of the valid set in id
        order: any fixed order gives every token an interval as wide as its probability.
        """
        if u is None or len(view.valid_sorted) == 1:
            return int(view.valid_sorted[0])
        if view.deep is not None:
            cum = np.cumsum(self.p_masked(view.valid_sorted, view))
            i = int(np.searchsorted(cum, u * cum[-1], side="right"))
            return int(view.valid_sorted[min(i, len(cum) - 1)])
        target = u * view.valid_mass
        cum = np.cumsum(view.p_valid_sorted)
        if target >= cum[-1] and view.rest_in_pv:
            rest = self._sample_rest(view.valid_sorted, target - cum[-1])
            if rest is not None:
                return rest
        # A head-first view never draws from its unchecked tail (at most its mass bound).
        i = int(np.searchsorted(cum, min(target, cum[-1] * (1 - 1e-12)), side="right"))
        return int(view.valid_sorted[min(i, len(cum) - 1)])

    def _sample_rest(self, ranked: np.ndarray, target: float) -> int | None:
        """The draw landed past the ranked tokens: find it among the others by block sums.

        Two short cumulative sums (over blocks, then within one) instead of one over the
        whole vocabulary, in float64 so that no rounding shifts the intervals.
        """
        pv = self._pv_padded
        pv[ranked] = 0.0  # already walked; pv is rebuilt at the next step
        blocks = pv.reshape(-1, BLOCK).sum(axis=1, dtype=np.float64)
        filled = np.flatnonzero(blocks)
        if len(filled) == 0:
            return None
        cum_blocks = np.cumsum(blocks)
        # Rounding can put the target past the last valid token: that token takes it.
        b = min(int(np.searchsorted(cum_blocks, target, side="right")), int(filled[-1]))
        start = b * BLOCK
        block = pv[start : start + BLOCK]
        within = np.cumsum(block, dtype=np.float64)
        i = int(np.searchsorted(within, target - (cum_blocks[b] - blocks[b]), side="right"))
        return start + min(i, int(np.flatnonzero(block)[-1]))


def _tighten(
    p: np.ndarray,
    idx: np.ndarray,
    tail: float,
    lower: float,
    upper: float,
    tail_eps: float,
    min_count: int,
) -> tuple[np.ndarray, float]:
    """Shrink a head found at threshold `lower` (where `upper`, 100x higher, left too much
    out) to near the smallest head whose tail is still at most `tail_eps`.

    Thresholds fall 100x at a time, so the first head that qualifies held ~2x the tokens it
    needs on MaskBench runs, and every one costs a grammar check. The head's values go into
    log-spaced bins between the two thresholds; the lowest bins whose mass still fits under
    the bound leave the head.
    """
    vals = p[idx]
    spare = 0.99 * (tail_eps - tail)  # the margin covers float32 rounding of the bin sums
    log_bins = np.log(vals * np.float32(1.0 / lower))
    log_bins *= np.float32(_TIGHTEN_BINS / np.log(upper / lower))
    bins = np.minimum(log_bins, np.float32(_TIGHTEN_BINS)).astype(np.intp)  # above: bin K
    mass = np.cumsum(np.bincount(bins, weights=vals, minlength=_TIGHTEN_BINS + 1))
    # The mass grows bin by bin, so the bins that may go are a prefix.
    first_kept = int(np.count_nonzero(mass[:_TIGHTEN_BINS] <= spare))
    if first_kept == 0:
        return idx, tail
    pos = np.flatnonzero(bins >= first_kept)
    tight_tail = 1.0 - float(vals[pos].sum(dtype=np.float64))
    if tight_tail > tail_eps or len(pos) < min_count:  # never trade exactness for speed
        return idx, tail
    return idx[pos], tight_tail


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Ids of the k largest positive values (fewer if fewer are positive), largest first.

    `values` is padded to whole blocks. The k-th largest block maximum is a threshold that
    at least k values reach, so the top k are all among the few values at or above it, in
    the few blocks whose maximum reaches it.
    """
    blocks = values.reshape(-1, BLOCK)
    block_max = blocks.max(axis=1)
    thr = 0.0
    if len(block_max) > k:
        thr = float(np.partition(block_max, len(block_max) - k)[len(block_max) - k])
    if thr > 0.0:
        reached = np.flatnonzero(block_max >= thr)
        ids = ids_in_blocks(blocks, reached, lambda v: v >= thr)
    else:
        ids = np.flatnonzero(values > 0.0)
    return ids[_top_positions(values[ids], k)][:k]


def ids_in_blocks(
    blocks: np.ndarray, reached: np.ndarray, keep: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Ids, in order, of the values that `keep` selects in the `reached` rows of `blocks` (a
    vocabulary laid out in rows of BLOCK): the same ids as over the whole vocabulary when
    no other row holds one."""
    within = np.flatnonzero(keep(blocks[reached]))
    return reached[within // BLOCK] * BLOCK + within % BLOCK


def _top_positions(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k largest values, largest first, without a full sort."""
    if len(values) > k:
        part = np.argpartition(-values, k - 1)[:k]
        return part[np.argsort(-values[part], kind="stable")]
    return np.argsort(-values, kind="stable")
