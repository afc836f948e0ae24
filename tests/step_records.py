"""A StepRecord with only a token and a valid mass, for tests of what compares and lists
runs (they read the chosen tokens and the mass, nothing else of a step)."""

from __future__ import annotations

from engine.records import StepRecord


def token_record(
    step: int, token_id: int, piece: str, mass: float = 1.0, n_valid: int = 1
) -> StepRecord:
    return StepRecord(
        step=step,
        token_id=token_id,
        token_text=piece,
        token_piece=piece,
        top_raw=(),
        top_masked=(),
        valid_mass=mass,
        valid_mass_bound=0.0,
        n_valid=n_valid,
        n_valid_exact=True,
        entropy=0.0,
        forward_ms=0.0,
        mask_ms=0.0,
        output_chars=0,
    )
