"""One decode step, for a single run (engine/decode/loop.py) and for each sequence of a batch
(engine/decode/batch.py) alike: Stepper.step does mask -> checks -> draw -> accept, and
Stepper.finish_step makes the step's record, now or beside the next forward pass
(engine/decode/overlap.py decides when). Stepper holds the run's state between steps: the
masks, the distribution, the sampler and the output so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# Imported with this module, not on first use: NumPy loads numpy.random lazily, and loading
# it holds the GIL for about 90 ms, which froze the window at a run's first step when the
# worker thread did it (the bench's GUI-lag probe: 90-140 ms).
from numpy.random import default_rng

from engine.decode.distribution import Distribution, MaskedView, inverse_temperature
from engine.decode.gumbel import GumbelNoise, StepNoise
from engine.errors import GrammarError
from engine.grammar.compile import CompiledSchema
from engine.masking import MaskBackend, make_backend
from engine.model.llama import Model
from engine.records import Candidate, Disagreement, FinishReason, FullStep, StepRecord
from engine.settings import GenerationSettings, cross_check_backend

# llama.cpp's grammar check costs ~0.3 us a token, so the head-first check stops once
# the unchecked tail holds under this much probability mass.
HEAD_TAIL_EPS = 1e-6
_DISAGREEMENT_SHOWN = 8
_NOTHING_ALLOWED = "the grammar allows no token at all here"


@dataclass(frozen=True, slots=True)
class Made:
    """What a step decided, for its record."""

    step: int
    token: int
    mask: np.ndarray | None  # the full mask, when the step has one
    n_valid: int
    mask_ms: float
    forward_ms: float  # of the forward pass that gave this step's logits
    n_chars: int  # of the output so far, this token's piece included
    piece: bytes


@dataclass(frozen=True, slots=True)
class Ahead:
    """A step's mask as the step reads it: for drawn-ahead runs made (with the noise) before
    the logits arrive; otherwise taken from the masked view made now."""

    mask: np.ndarray | None  # None: a head-first view, which has no full mask
    n_valid: int
    complete: bool  # only end tokens are allowed (grammar_complete)
    noise: StepNoise | None = None  # None: greedy, or not drawn ahead


@dataclass(frozen=True, slots=True)
class Decided:
    """What Stepper.step decided: a token and what its record needs (`made`), or, with
    `made` None, a run that ended before drawing; `finish` also marks an end token."""

    made: Made | None
    view: MaskedView | None = None
    disagreement: Disagreement | None = None
    full: FullStep | None = None
    finish: FinishReason | None = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class _Pair:
    """What a cross-check compares, as its Disagreements name it."""

    between: str  # "backends": two backends, one grammar; "compilers": two grammars, one backend
    primary: str
    secondary: str

    @property
    def second_mask(self) -> str:
        if self.between == "compilers":
            return f"the {self.secondary} compiler's grammar"
        return self.secondary


def cross_checker(
    model: Model,
    compiled: CompiledSchema,
    settings: GenerationSettings,
    cross: CompiledSchema | None,
) -> tuple[MaskBackend, _Pair]:
    """The second mask of a cross-checked run, and how to name the two. A compilers'
    cross-check runs `cross`, the other compiler's grammar, compiled by the caller: decoding
    never calls a compiler."""
    other = settings.cross_check_compiler
    if other is not None:
        if cross is None or cross.compiler != other:
            raise GrammarError(f"a cross-check against {other} needs that compiler's grammar")
        pair = _Pair("compilers", compiled.compiler, other)
        return make_backend(settings.backend, model, cross), pair
    backend = cross_check_backend(compiled.compiler, settings.backend)
    if backend is None:  # settings.problem() refuses this before a run starts
        raise GrammarError(f"no other backend runs the {compiled.compiler} compiler's grammar")
    return make_backend(backend, model, compiled), _Pair("backends", settings.backend, backend)


def drawn_ahead(
    model: Model,
    primary: MaskBackend,
    secondary: MaskBackend | None,
    settings: GenerationSettings,
) -> GumbelNoise | None:
    """The noise of a run that draws before its record is made: with compute to spare and
    a cheap full mask, the mask and the noise are made during the forward pass
    (engine/decode/overlap.py), the step waits only for a Gumbel-max draw (gumbel.py), and
    P and the masked view are made with the record. None: the draw is by inverse CDF over
    the masked view. A single run and a batch's row decide alike, so they draw alike."""
    if model.has_spare_compute and primary.cheap_full_mask and secondary is None:
        return GumbelNoise(model.n_vocab, settings.seed, settings.temperature)
    return None


class Stepper:
    """One run's state between steps, and the step itself."""

    def __init__(
        self,
        model: Model,
        primary: MaskBackend,
        secondary: MaskBackend | None,
        settings: GenerationSettings,
        pair: _Pair | None = None,
        draw: GumbelNoise | None = None,
    ) -> None:
        self.model = model
        self.primary = primary
        self.secondary = secondary
        self.pair = pair
        self.settings = settings
        self.dist = Distribution(model.n_vocab)
        self.eog = model.eog_ids
        self.rng = default_rng(settings.seed)
        self._inv_t = np.float32(inverse_temperature(settings.temperature))
        self.draw = draw  # drawn ahead of the record (drawn_ahead()); else by inverse CDF
        self.out = bytearray()
        self.n_chars = 0
        self.n_tokens = 0
        self.mask_ms = 0.0  # summed over the steps
        self.note = ""  # why the cross-check stopped, when it did

    def step(
        self,
        step: int,
        logits: np.ndarray,
        forward_ms: float,
        ahead: Callable[[], Ahead] | None = None,
        forced: int | None = None,
        shared_mask_ms: float = 0.0,
    ) -> Decided:
        """Mask, check, draw and accept one token from `logits`. `ahead` hands over the mask
        and noise made during the forward pass (drawn-ahead runs); `forced` is the token to take
        instead of a draw; `shared_mask_ms` is this run's share of a mask call made for a
        whole batch. An error of the backend's accept() is raised."""
        got, view, mask_ms = self._mask(logits, ahead)
        mask, n_valid = got.mask, got.n_valid
        mask_ms += shared_mask_ms
        if n_valid == 0:
            return Decided(None, finish=FinishReason.ERROR, message=_NOTHING_ALLOWED)
        if got.complete:
            return Decided(None, finish=FinishReason.GRAMMAR_COMPLETE)
        if forced is not None and not self._allowed(mask, forced):
            message = f"the grammar forbids {self.model.readable(forced)} at step {step + 1}"
            return Decided(None, finish=FinishReason.ERROR, message=message)
        token = forced if forced is not None else self._draw(logits, mask, view, got.noise)
        if view is None:  # drawn ahead: the draw read the logits while they were in cache
            self.dist.scale(logits, self.settings.temperature)  # llama.cpp reuses its buffer
        # What needs this step's grammar state is taken before the backends move on.
        disagreement = self.disagreement(view) if self.secondary is not None else None
        full = self.full_step(view) if self.settings.keep_full and view is not None else None
        is_end = self.model.is_eog(token)
        self.n_tokens += 1
        self.mask_ms += mask_ms
        if not is_end:
            self._accept(step, token)
        piece = b"" if is_end else self.model.piece(token)
        self.out += piece
        self.n_chars += sum(1 for b in piece if b & 0xC0 != 0x80)
        made = Made(step, token, mask, n_valid, mask_ms, forward_ms, self.n_chars, piece)
        end = FinishReason.END_OF_GENERATION if is_end else None
        return Decided(made, view, disagreement, full, end)

    def _mask(
        self, logits: np.ndarray, ahead: Callable[[], Ahead] | None
    ) -> tuple[Ahead, MaskedView | None, float]:
        """The step's mask (made ahead, or now), its masked view (None when drawn ahead: the
        record makes it) and the mask's ms."""
        temperature = self.settings.temperature
        if self.draw is not None:
            start = time.perf_counter()
            got = (ahead or self.ahead)()
            mask_ms = (time.perf_counter() - start) * 1000.0
            return got, None, mask_ms  # z is kept for the record after the draw
        self.dist.update(logits, temperature)
        view, mask_ms = self.masked()
        mask, n_valid = view.full_mask, view.n_valid
        return Ahead(mask, n_valid, self.grammar_complete(mask, n_valid)), view, mask_ms

    def _allowed(self, mask: np.ndarray | None, token: int) -> bool:
        if mask is not None:
            return bool(mask[token])
        return bool(self.primary.check(np.array([token], dtype=np.int32))[0])

    def _draw(
        self,
        logits: np.ndarray,
        mask: np.ndarray | None,
        view: MaskedView | None,
        noise: StepNoise | None,
    ) -> int:
        if self.draw is not None:
            assert mask is not None
            return self.draw.draw(logits, self._inv_t, mask, noise)
        assert view is not None
        u = float(self.rng.random()) if self.settings.temperature > 0 else None
        return self.dist.sample(view, u)

    def _accept(self, step: int, token: int) -> None:
        self.primary.accept(token)
        if self.secondary is None:
            return
        if self.secondary.check(np.array([token], dtype=np.int32))[0]:
            self.secondary.accept(token)
            return
        assert self.pair is not None
        self.note = (
            f"cross-check stopped at step {step}: {self.pair.second_mask} "
            f"forbids the chosen token {self.model.readable(token)}"
        )
        self.secondary.close()
        self.secondary = None

    def prepare_next(self) -> None:
        """Check ahead for the next step while its forward pass runs (head-first backends)."""
        self.primary.prepare(self.likely_next())
        if self.secondary is not None:
            self.secondary.prepare()

    def text(self) -> str:
        return self.out.decode("utf-8", errors="replace")

    def close(self) -> None:
        for backend in (self.primary, self.secondary):
            if backend is not None:
                backend.close()

    def masked(self) -> tuple[MaskedView, float]:
        start = time.perf_counter()
        backend = self.primary
        k = self.settings.top_k
        if backend.cheap_full_mask or self.settings.exact_mask:
            view = self.dist.mask_full(backend.full_mask(), k)
        else:
            view = self.dist.mask_head(backend.check, HEAD_TAIL_EPS, k)
            if len(view.valid_sorted) == 0 or self._only_eog(view.valid_sorted):
                # Nothing (or only an end token) in the head is valid: the answer may be in
                # the tail, so check the whole vocabulary before deciding.
                view = self.dist.mask_full(backend.full_mask(), k)
        return view, (time.perf_counter() - start) * 1000.0

    def likely_next(self) -> np.ndarray | None:
        """The tokens worth checking ahead for the next step: this step's checked head."""
        if self.primary.cheap_full_mask or self.settings.exact_mask:
            return None
        return self.dist.last_head

    def _only_eog(self, ids: np.ndarray) -> bool:
        return bool(np.isin(ids, self.eog).all())

    def grammar_complete(self, mask: np.ndarray | None, n_valid: int) -> bool:
        """True when the grammar admits nothing but an end token."""
        if mask is None:
            return False
        return n_valid == int(mask[self.eog].sum())

    def ahead(self) -> Ahead:
        """The next step's mask, valid count and noise; runs while the forward pass runs."""
        assert self.draw is not None
        mask = self.primary.full_mask()
        n_valid = int(np.count_nonzero(mask))
        complete = self.grammar_complete(mask, n_valid)
        return Ahead(mask, n_valid, complete, self.draw.for_step(mask, n_valid))

    def candidates(
        self, ids: np.ndarray, ok_all: np.ndarray, view: MaskedView
    ) -> tuple[Candidate, ...]:
        p = self.dist.p
        masked = np.where(ok_all, self.dist.p_masked(ids, view), 0.0).tolist()
        logits = self.dist.logits_of(ids).tolist()
        out = []
        for tid, ok, logit, p_masked in zip(
            ids.tolist(), ok_all.tolist(), logits, masked, strict=True
        ):
            pr = float(p[tid])
            text, piece = self.model.readable(tid), self.model.output_text(tid)
            out.append(Candidate(tid, text, pr, p_masked, ok, piece, logit))
        return tuple(out)

    def record(self, decided: Decided) -> StepRecord:
        """The record of a step that drew a token."""
        assert decided.made is not None
        return self.finish_step(decided.made, decided.view, decided.disagreement, decided.full)

    def finish_step(
        self,
        made: Made,
        view: MaskedView | None,
        disagreement: Disagreement | None,
        full: FullStep | None,
    ) -> StepRecord:
        """The step's record; P and the masked view too when the draw came first (then
        `view` is None). Runs beside the next forward pass when compute is spare."""
        if view is None:
            assert made.mask is not None
            self.dist.normalise()
            view = self.dist.mask_full(made.mask, self.settings.top_k, made.n_valid)
            if self.settings.keep_full:
                full = self.full_step(view)
        k = self.settings.top_k
        raw_ids = self.dist.top_raw(k)
        top_valid = view.valid_sorted[:k]
        return StepRecord(
            step=made.step,
            token_id=made.token,
            token_text=self.model.readable(made.token),
            token_piece=made.piece.decode("utf-8", errors="replace"),
            top_raw=self.candidates(raw_ids, self.dist.valid_flags(raw_ids, view), view),
            top_masked=self.candidates(top_valid, np.ones(len(top_valid), bool), view),
            valid_mass=view.valid_mass,
            valid_mass_bound=view.mass_bound,
            n_valid=view.n_valid,
            n_valid_exact=view.n_valid_exact,
            entropy=self.dist.entropy,
            forward_ms=made.forward_ms,
            mask_ms=made.mask_ms,
            output_chars=made.n_chars,
            disagreement=disagreement,
            full=full,
        )

    def whole_mask(self, view: MaskedView) -> np.ndarray:
        """The primary's full mask; head-first views compute it once, on demand."""
        if view.full_mask is None:
            view.full_mask = self.primary.full_mask()
        return view.full_mask

    def full_step(self, view: MaskedView) -> FullStep:
        return FullStep(p_raw=self.dist.p.copy(), valid=self.whole_mask(view).copy())

    def disagreement(self, view: MaskedView) -> Disagreement | None:
        assert self.secondary is not None and self.pair is not None
        mine = self.whole_mask(view)
        theirs = self.secondary.full_mask()
        only_mine = np.flatnonzero(mine & ~theirs)
        only_theirs = np.flatnonzero(theirs & ~mine)
        if len(only_mine) == 0 and len(only_theirs) == 0:
            return None
        return Disagreement(
            primary=self.pair.primary,
            secondary=self.pair.secondary,
            only_primary=self._ranked(only_mine, mine),
            only_secondary=self._ranked(only_theirs, theirs),
            n_only_primary=len(only_mine),
            n_only_secondary=len(only_theirs),
            between=self.pair.between,
        )

    def _ranked(self, ids: np.ndarray, allowed_by: np.ndarray) -> tuple[Candidate, ...]:
        p = self.dist.p
        top = ids[np.argsort(-p[ids], kind="stable")[:_DISAGREEMENT_SHOWN]]
        return tuple(
            Candidate(
                int(t),
                self.model.readable(int(t)),
                float(p[t]),
                0.0,
                bool(allowed_by[t]),
                self.model.output_text(int(t)),
            )
            for t in top
        )
