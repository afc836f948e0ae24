"""Plain, immutable records that every view and the CLI read.

A decode run yields one :class:`StepRecord` per generated token and ends with a
:class:`RunResult`. Nothing here knows about Qt or llama.cpp, so a saved run can
be replayed anywhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class FinishReason(str, Enum):
    """Why a run stopped."""

    GRAMMAR_COMPLETE = "grammar_complete"  # the grammar admits nothing but the end
    END_OF_GENERATION = "end_of_generation"  # the model chose an end token the grammar allowed
    MAX_TOKENS = "max_tokens"  # cut off: the output is truncated and never counts as valid
    CANCELLED = "cancelled"  # stopped by the user between two steps
    ERROR = "error"  # the engine failed mid-run; RunResult.message says why

    @property
    def label(self) -> str:
        return {
            FinishReason.GRAMMAR_COMPLETE: "grammar complete",
            FinishReason.END_OF_GENERATION: "end of generation",
            FinishReason.MAX_TOKENS: "truncated at max_tokens",
            FinishReason.CANCELLED: "stopped by user",
            FinishReason.ERROR: "error",
        }[self]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One token in a step's top-K list."""

    id: int
    text: str  # the display form: whitespace, control and special bytes made visible
    p_raw: float  # softmax(logits / T) over the full vocabulary
    p_masked: float  # P / sum(P over valid); 0 for masked-out tokens
    valid: bool
    piece: str | None = None  # the exact text the token adds; None in runs saved without it
    logit: float | None = None  # the model's raw logit, before ÷ T; None in older saved runs


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Tokens that two masks judge differently at one step (cross-check mode): two backends
    on one grammar, or two compilers' grammars on one backend."""

    primary: str  # the run's own backend, or its compiler when `between` is "compilers"
    secondary: str
    only_primary: tuple[Candidate, ...]  # allowed by the primary mask only
    only_secondary: tuple[Candidate, ...]  # allowed by the secondary mask only
    n_only_primary: int
    n_only_secondary: int
    between: str = "backends"  # or "compilers"; runs saved before compilers had only backends


@dataclass(frozen=True, slots=True)
class FullStep:
    """Full-vocabulary arrays for one step, only kept when asked for (they are ~1.3 MB)."""

    p_raw: Any  # float32 array: softmax(logits / T)
    valid: Any  # bool array: the exact valid set


@dataclass(frozen=True, slots=True)
class StepRecord:
    """Everything a view needs about one decoding step; top-K plus scalars only."""

    step: int
    token_id: int
    token_text: str  # display form of the chosen token (␣, \n, <0xE2>, <eos>)
    token_piece: str  # the exact text the token appends to the output
    top_raw: tuple[Candidate, ...]  # top-K by P before masking
    top_masked: tuple[Candidate, ...]  # top-K by P after masking (all valid)
    valid_mass: float  # sum of P over the valid set (a lower bound when not exact)
    valid_mass_bound: float  # valid_mass is exact to within this (0 = exact)
    n_valid: int  # number of valid tokens (a lower bound when not exact)
    n_valid_exact: bool
    entropy: float  # of the raw distribution, in nats
    forward_ms: float
    mask_ms: float
    output_chars: int  # length of the output after this step
    disagreement: Disagreement | None = None
    full: FullStep | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["full"]  # arrays stay out of saved runs
        return data


@dataclass(frozen=True, slots=True)
class ValidationIssue:
    """One jsonschema error: where in the instance, and what is wrong."""

    path: str  # JSON path such as $.items[0].price
    message: str


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a finished (or stopped) run produced."""

    text: str
    finish_reason: FinishReason
    n_tokens: int
    parsed: Any = None
    parse_error: str | None = None
    errors: tuple[ValidationIssue, ...] = ()
    total_ms: float = 0.0
    setup_ms: float = 0.0  # building the mask backends
    prompt_ms: float = 0.0
    forward_ms: float = 0.0
    mask_ms: float = 0.0
    message: str = ""  # human-readable summary or error text
    settings: dict[str, Any] = field(default_factory=dict)
    # Formats the schema uses that could not be checked: their checker's library is missing.
    unchecked_formats: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        return self.finish_reason is FinishReason.MAX_TOKENS

    @property
    def valid(self) -> bool:
        """Valid means: finished normally, parsed, and passed the schema."""
        return (
            self.finish_reason in (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)
            and self.parse_error is None
            and not self.errors
        )

    @property
    def unchecked_note(self) -> str:
        """Which formats went unchecked and how to check them; empty when none did."""
        if not self.unchecked_formats:
            return ""
        names = ", ".join(self.unchecked_formats)
        return (
            f"format not checked: {names} (jsonschema's checker needs a library that is not "
            "installed: pip install 'jsonschema[format-nongpl]')"
        )

    @property
    def tokens_per_s(self) -> float:
        gen_ms = self.total_ms - self.setup_ms - self.prompt_ms
        return 1000.0 * self.n_tokens / gen_ms if gen_ms > 0 and self.n_tokens else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "json": self.parsed,
            "valid": self.valid,
            "errors": [{"path": e.path, "message": e.message} for e in self.errors],
            "parse_error": self.parse_error,
            "finish_reason": self.finish_reason.value,
            "n_tokens": self.n_tokens,
            "total_ms": round(self.total_ms, 3),
            "tokens_per_s": round(self.tokens_per_s, 2),
            "message": self.message,
            "unchecked_formats": list(self.unchecked_formats),
        }
