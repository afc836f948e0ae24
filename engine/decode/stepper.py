"""One run's state between the decode loop's steps (Stepper) and what a step decided (Made):
the masks, the distribution and the records, shared by a single run (engine/decode/loop.py)
and by each sequence of a batch (engine/decode/batch.py), so both make the same records.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.decode.distribution import Distribution, MaskedView
from engine.errors import GrammarError
from engine.grammar.compile import CompiledSchema, compile_schema
from engine.masking import MaskBackend, make_backend
from engine.model.llama import Model
from engine.records import Candidate, Disagreement, FullStep, StepRecord
from engine.settings import GenerationSettings, cross_check_backend

# llama.cpp's grammar check costs ~0.3 us a token, so the head-first check stops once
# the unchecked tail holds under this much probability mass.
HEAD_TAIL_EPS = 1e-6
_DISAGREEMENT_SHOWN = 8


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
    model: Model, compiled: CompiledSchema, settings: GenerationSettings
) -> tuple[MaskBackend, _Pair]:
    """The second mask of a cross-checked run, and how to name the two."""
    other = settings.cross_check_compiler
    if other is not None:
        grammar = compile_schema(compiled.text, other)
        pair = _Pair("compilers", compiled.compiler, other)
        return make_backend(settings.backend, model, grammar), pair
    backend = cross_check_backend(compiled.compiler, settings.backend)
    if backend is None:  # settings.problem() refuses this before a run starts
        raise GrammarError(f"no other backend runs the {compiled.compiler} compiler's grammar")
    return make_backend(backend, model, compiled), _Pair("backends", settings.backend, backend)


class Stepper:
    """Holds the per-run state the generator needs between steps."""

    def __init__(
        self,
        model: Model,
        primary: MaskBackend,
        secondary: MaskBackend | None,
        settings: GenerationSettings,
        pair: _Pair | None = None,
    ) -> None:
        self.model = model
        self.primary = primary
        self.secondary = secondary
        self.pair = pair
        self.settings = settings
        self.dist = Distribution(model.n_vocab)
        self.eog = model.eog_ids

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

    def next_mask(self) -> tuple[np.ndarray, int]:
        """The next step's mask and its valid count; runs while the forward pass runs."""
        mask = self.primary.full_mask()
        return mask, int(np.count_nonzero(mask))

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
