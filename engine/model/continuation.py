"""A text's tokens as a model's continuation spells it, never as the start of a document.

llama.cpp's SentencePiece tokenizer puts a space before a text when the vocabulary asks for
one (`tokenizer.ggml.add_space_prefix`, on where the key is missing: Phi-3, Llama 2,
Mistral). That space belongs to a document's start, not to an output the model writes after
its prompt: `{"a": 1}` must reach a grammar as `{` ..., not as `▁{` ... (which every JSON
grammar refuses at character 0). Gemma's vocabulary turns the prefix off, and byte-level BPE
(Llama 3, Qwen2) has none, so their tokens are llama.cpp's as they are.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.model.llama import Model

# Model -> {piece bytes: token id}, built the first time a space prefix must be undone.
_tables: weakref.WeakKeyDictionary[Model, dict[bytes, int]] = weakref.WeakKeyDictionary()


def continuation_tokens(model: Model, text: str) -> list[int]:
    """Token ids whose pieces spell `text` exactly, as the model would write it after a
    prompt: llama.cpp's own tokenization, less a space prefix it added."""
    tokens = model.tokenize(text, add_special=False, parse_special=False)
    if not tokens or not adds_space_prefix(model):
        return tokens
    first = model.piece(tokens[0])
    if not first.startswith(b" "):  # an unknown character's <unk>: nothing to undo
        return tokens
    return spell(model, first[1:]) + tokens[1:]


def adds_space_prefix(model: Model) -> bool:
    """Whether llama.cpp puts a space before a text for this vocabulary, seen by asking it
    (the GGUF key's default differs by tokenizer type and llama.cpp version)."""
    tokens = model.tokenize("x", add_special=False, parse_special=False)
    return b"".join(map(model.piece, tokens)) == b" x"


def spell(model: Model, data: bytes) -> list[int]:
    """Tokens for `data` from the vocabulary's pieces, longest piece first (a lone `▁`
    left over spells nothing). A byte no piece holds stays unspelled: the vocabulary cannot
    write it, and the grammar is then shown the rest."""
    table = _tables.get(model)
    if table is None:
        table = _tables[model] = _piece_table(model)
    longest = max(map(len, table), default=1)
    out: list[int] = []
    at = 0
    while at < len(data):
        for end in range(min(len(data), at + longest), at, -1):
            token = table.get(data[at:end])
            if token is not None:
                out.append(token)
                at = end
                break
        else:
            at += 1
    return out


def _piece_table(model: Model) -> dict[bytes, int]:
    """Every text token's piece, an ordinary token preferred over a byte-fallback one that
    spells the same byte (as SentencePiece itself prefers)."""
    table: dict[bytes, int] = {}
    for token in range(model.n_vocab):
        if model.is_special(token):
            continue
        piece = model.piece(token)
        if piece and (piece not in table or not model.is_byte(token)):
            table[piece] = token
    return table
