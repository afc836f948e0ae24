"""The model's tokenizer without the model: a vocabulary-only load, for `maskscope lint`.

llama.cpp reads only the GGUF's vocabulary (no weights, no context): about a second for
Gemma 3's 262,144 tokens on 2 busy cores, so the command line can count tokens for the
output bound without loading the model.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import llama_cpp

from engine.errors import ModelLoadError
from engine.model import native_log
from engine.model.llama import check_gguf_file
from engine.model.paths import default_model_path

if TYPE_CHECKING:
    from engine.model.llama import Model


def vocab_tokenizer(path: str | None = None) -> Callable[[str], list[int]]:
    """tokenize(text) -> token ids, as the model reads plain text (no BOS, no specials)."""
    native_log.install()
    llama_cpp.llama_backend_init()
    gguf = Path(path).expanduser() if path else default_model_path()
    check_gguf_file(gguf)
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    with native_log.capture() as captured:
        model = llama_cpp.llama_model_load_from_file(str(gguf).encode(), params)
    if not model:
        reason = captured.errors.strip() or "llama.cpp could not read it"
        raise ModelLoadError(f"cannot read the vocabulary of {gguf}: {reason}")
    atexit.register(llama_cpp.llama_model_free, model)
    vocab = llama_cpp.llama_model_get_vocab(model)

    def tokenize(text: str) -> list[int]:
        data = text.encode("utf-8")
        cap = len(data) + 16
        buf = (llama_cpp.llama_token * cap)()
        n = llama_cpp.llama_tokenize(vocab, data, len(data), buf, cap, False, False)
        return list(buf[: max(n, 0)])

    return tokenize


def model_tokenizer(model: Model) -> Callable[[str], list[int]]:
    """The same tokenize(text) from a loaded model, for the window (it has one)."""
    return lambda text: model.tokenize(text, add_special=False, parse_special=False)
