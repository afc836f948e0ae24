"""Runs of a random-weight model under a grammar, judged by what constrained decoding
promises: a run the grammar ended is valid JSON that passes the schema, and no step ever
allowed a token that makes the output something other than UTF-8.

The judge of UTF-8 is Python's own strict decoder, not Maskscope's guard
(engine/masking/utf8.py), so that a fault in the guard shows here.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from engine.decode.loop import generate
from engine.grammar.compile import compile_schema
from engine.records import FinishReason
from engine.schema.parse import schema_validator
from engine.settings import GenerationSettings

if TYPE_CHECKING:
    from jsonschema import ValidationError

    from engine.grammar.compile import CompiledSchema
    from engine.model.llama import Model
    from engine.records import RunResult

# Every compiler with every backend that runs its grammar.
PAIRINGS = [
    ("maskscope", "llamacpp"),
    ("maskscope", "llguidance"),
    ("llamacpp", "llamacpp"),
    ("llamacpp", "llguidance"),
    ("llguidance", "llguidance"),
    ("outlines", "outlines"),
    ("maskscope", "xgrammar"),
    ("xgrammar", "xgrammar"),
]
ENDED_BY_GRAMMAR = (FinishReason.GRAMMAR_COMPLETE, FinishReason.END_OF_GENERATION)


def _prefix_ok(data: bytes, final: bool = False) -> bool:
    try:
        codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=final)
    except UnicodeDecodeError:
        return False
    return True


class Breakers:
    """For a text ending in `tail` (the bytes of a character not yet complete), the tokens
    after which the text can no longer be UTF-8; computed once per tail."""

    def __init__(self, model: Model) -> None:
        ends = set(model.eog_ids.tolist())
        self.pieces = [b"" if t in ends else model.piece(t) for t in range(model.n_vocab)]
        self.ends = np.array(sorted(ends), dtype=np.int64)
        self._by_tail: dict[bytes, np.ndarray] = {}

    def after(self, tail: bytes) -> np.ndarray:
        found = self._by_tail.get(tail)
        if found is None:
            found = np.array([not _prefix_ok(tail + p) for p in self.pieces])
            found[self.ends] = bool(tail)  # the text may not end inside a character
            self._by_tail[tail] = found
        return found


def lone_byte_tokens(model: Model) -> dict[int, int]:
    """byte -> the token whose whole piece is that one byte, for 0x80-0xFF (Gemma has one
    for each; a model that picks them is the case llama.cpp's UTF-8 check got wrong)."""
    found = {}
    for t in range(model.n_vocab):
        piece = model.piece(t)
        if len(piece) == 1 and piece[0] >= 0x80:
            found[piece[0]] = t
    return found


def undecoded_tail(data: bytes) -> bytes:
    """The bytes at the end of a valid UTF-8 prefix that do not yet make a character."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    decoder.decode(data, final=False)
    return decoder.getstate()[0]


@dataclass
class Tally:
    runs: int = 0
    steps: int = 0
    ended_by_grammar: int = 0
    truncated: int = 0
    bad_endings: list[str] = field(default_factory=list)  # grammar ended, text not valid
    bad_steps: list[str] = field(default_factory=list)  # a step allowed a UTF-8 breaker
    # The engine failed mid-run: a backend refusing a token its own mask allowed ends here.
    errors: list[str] = field(default_factory=list)


def run_one(
    model: Model, breakers: Breakers, schema_text: str, prompt: str,
    compiler: str, backend: str, seed: int, max_tokens: int, tally: Tally,
) -> None:  # fmt: skip
    """One run, every step checked; failures are added to `tally` with where they were."""
    compiled = compile_schema(schema_text, compiler)
    settings = GenerationSettings(
        max_tokens=max_tokens, temperature=1.0, seed=seed, backend=backend,
        compiler=compiler, keep_full=True, exact_mask=True,
    )  # fmt: skip
    where = f"{compiler}/{backend} seed {seed}"
    out = b""
    gen = generate(model, compiled, prompt, settings)
    while True:
        try:
            record = next(gen)
        except StopIteration as stop:
            result = stop.value
            break
        tally.steps += 1
        breaking = np.flatnonzero(record.full.valid & breakers.after(undecoded_tail(out)))
        if len(breaking):
            shown = [breakers.pieces[t] for t in breaking[:5]]
            tally.bad_steps.append(f"{where} step {record.step} after {out[-12:]!r}: {shown}")
            gen.close()
            return
        out += breakers.pieces[record.token_id]
    tally.runs += 1
    if result.finish_reason in ENDED_BY_GRAMMAR:
        tally.ended_by_grammar += 1
        problem = _broken_promise(result, compiled, out)
        if problem:
            tally.bad_endings.append(f"{where}: {result.text[:80]!r}: {problem}")
    elif result.finish_reason is FinishReason.MAX_TOKENS:
        tally.truncated += 1
    elif result.finish_reason is FinishReason.ERROR:
        tally.errors.append(f"{where}: {result.message}")


def _broken_promise(result: RunResult, compiled: CompiledSchema, out: bytes) -> str | None:
    """Why a run the grammar ended breaks what the compiler promised, or None.

    Its text is UTF-8 JSON, always. It passes the schema, except where it breaks only
    keywords the compiler reported it does not enforce (llama.cpp's converter skips
    `maximum` beside `"type": ["integer", "null"]`, and says so)."""
    if not _prefix_ok(out, final=True):
        return "not UTF-8"
    if result.parse_error:
        return result.parse_error
    skipped = {u.keyword for u in compiled.unenforced}
    errors = schema_validator(compiled.schema).iter_errors(result.parsed)
    unexplained = [e.message for e in errors if not _explained(e, skipped)]
    return "; ".join(unexplained) or None


def _explained(error: ValidationError, skipped: set[str]) -> bool:
    if error.validator in skipped:
        return True
    return bool(error.context) and all(_explained(e, skipped) for e in error.context)
