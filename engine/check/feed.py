"""Feed a text through a backend's grammar, token by token, as if the model had written it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import GrammarError
from engine.masking import MaskBackend, make_backend
from engine.model.continuation import continuation_tokens

if TYPE_CHECKING:
    from engine.model.llama import Model


@dataclass(frozen=True, slots=True)
class Fed:
    """Whether the grammar let the whole text through, then an end token."""

    accepted: bool
    rejected_at: int | None = None  # character offset where the refused token starts
    token: str | None = None  # the refused token's text; "" when only the end was refused

    @property
    def where(self) -> str:
        if self.accepted:
            return "accepted"
        if self.token == "":
            return f"incomplete: the grammar wants more after character {self.rejected_at}"
        return f"rejected at character {self.rejected_at}, token {self.token!r}"


def feed_text(model: Model, backend: MaskBackend, text: str) -> Fed:
    """Run `text` through `backend` from its start state; the backend is reset first.

    Each token is checked against the backend's mask, as if sampled. A backend that can
    count the valid prefix of a token list without masks (llguidance) is asked that first,
    the same verdict at a fraction of the cost; the end token is always checked by mask.
    """
    backend.reset()
    tokens = plain_tokens(model, text)
    count_valid = getattr(backend, "count_valid", None)
    if count_valid is not None:
        return _feed_counted(model, backend, tokens, count_valid(tokens))
    done = b""
    for token in tokens:
        if not backend.check(np.array([token], dtype=np.int32))[0]:
            return Fed(False, len(done.decode("utf-8", "replace")), model.output_text(token))
        backend.accept(token)
        done += model.piece(token)
    if not backend.check(model.eog_ids).any():
        return Fed(False, len(done.decode("utf-8", "replace")), "")
    return Fed(True)


def plain_tokens(model: Model, text: str) -> list[int]:
    """The model's tokens for `text` as its continuation would spell them (no space
    prefix), with user-defined tokens spelled out character by character: llguidance reads
    those (Gemma's HTML tags) as special, never as the text they stand for, so a valid
    `</iframe>` in a string would be refused under any grammar."""
    tokens: list[int] = []
    for token in continuation_tokens(model, text):
        if not model.is_user_defined(token):
            tokens.append(token)
            continue
        for ch in model.piece(token).decode("utf-8", "replace"):
            tokens += continuation_tokens(model, ch)
    return tokens


def _feed_counted(model: Model, backend: MaskBackend, tokens: list[int], valid: int) -> Fed:
    done = b"".join(model.piece(t) for t in tokens[:valid])
    if valid < len(tokens):
        return Fed(False, len(done.decode("utf-8", "replace")), model.output_text(tokens[valid]))
    for token in tokens:
        backend.accept(token)
    if not backend.check(model.eog_ids).any():
        return Fed(False, len(done.decode("utf-8", "replace")), "")
    return Fed(True)


def grammar_accepts(model: Model, gbnf: str, text: str) -> bool:
    """For tests of a compiler: does llguidance, reading `gbnf`, accept `text`?"""
    from engine.grammar.compile import CompiledSchema

    compiled = CompiledSchema(schema=True, gbnf=gbnf, text="")
    backend = make_backend("llguidance", model, compiled)
    try:
        return feed_text(model, backend, text).accepted
    except GrammarError:
        return False
    finally:
        backend.close()
