"""One step's renormalisation as the numbers a presenter reads out.

P(x) is the model's probability before masking (softmax of logits / T over the whole
vocabulary). The grammar keeps a valid set V; each kept token gets P(x) / ΣP(V), so the
ratios between valid tokens stay as the model had them. Every number here is copied from
the StepRecord, never recomputed, so what is shown is what the decoder used.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.records import Candidate, StepRecord


@dataclass(frozen=True, slots=True)
class Division:
    """P(x) / ΣP(V) = P'(x) for one valid candidate."""

    text: str
    p_raw: float
    valid_mass: float
    p_masked: float

    def written(self) -> str:
        return f"{self.p_raw:.3g} / {self.valid_mass:.3g} = {self.p_masked:.3g}"


@dataclass(frozen=True, slots=True)
class Renormalisation:
    terms: tuple[Candidate, ...]  # the largest valid terms of ΣP(V), by P before masking
    remainder: float  # ΣP(V) minus the named terms (≥ 0 up to rounding)
    n_more: int  # valid tokens in the remainder
    valid_mass: float
    exact: bool  # valid_mass and n_valid are exact, not lower bounds
    divisions: tuple[Division, ...]
    n_valid: int
    n_vocab: int
    chosen: str
    rank_before: int | None  # 1-based rank of the chosen token by P; None past the top-K
    rank_after: int | None  # the same after masking

    def sum_written(self) -> str:
        """ΣP(V) as a sum: `0.50 (USD) + 0.25 (EUR) + … (n more valid tokens) = 0.75`."""
        parts = [f"{t.p_raw:.3g} ({t.text})" for t in self.terms]
        if self.n_more:
            parts.append(f"{self.remainder:.3g} (+ … {self.n_more} more valid tokens)")
        total = f"{self.valid_mass:.3g}"
        return f"{' + '.join(parts)} = {total}" if parts else total


def explain(record: StepRecord, n_vocab: int, named: int = 3) -> Renormalisation:
    valid = sorted((c for c in record.top_raw if c.valid), key=lambda c: -c.p_raw)
    terms = tuple(valid[:named])
    remainder = max(0.0, record.valid_mass - sum(t.p_raw for t in terms))
    divisions = tuple(
        Division(c.text, c.p_raw, record.valid_mass, c.p_masked) for c in _renormalised(record)
    )
    return Renormalisation(
        terms=terms,
        remainder=remainder,
        n_more=max(0, record.n_valid - len(terms)),
        valid_mass=record.valid_mass,
        exact=record.n_valid_exact and record.valid_mass_bound == 0,
        divisions=divisions,
        n_valid=record.n_valid,
        n_vocab=n_vocab,
        chosen=record.token_text,
        rank_before=_rank(record.top_raw, record.token_id),
        rank_after=_rank(record.top_masked, record.token_id),
    )


def _renormalised(record: StepRecord) -> list[Candidate]:
    """The valid candidates of the step, highest after masking first."""
    return sorted(record.top_masked, key=lambda c: -c.p_masked)


def _rank(candidates: tuple[Candidate, ...], token_id: int) -> int | None:
    ranked = sorted(candidates, key=lambda c: -c.p_raw)
    return next((i for i, c in enumerate(ranked, 1) if c.id == token_id), None)
