"""The grammar judge's child process: llama.cpp parses a GBNF, builds its sampler, masks once.

Run as `python -m engine.grammar.judge.child [GGUF]` by engine/grammar/judge/verdicts.py.
It loads the vocabulary of the GGUF it is given, the default model's without one (vocab
only: no weights, no context), says `{"ready": true}`, then answers one JSON line per request line
`{"gbnf": TEXT}`: `{"ok": true}`, or `{"ok": false, "message", "detail"}` with llama.cpp's own
words. A grammar that crashes llama.cpp kills only this process.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from pathlib import Path
from typing import IO

import llama_cpp
import numpy as np

from engine.errors import GrammarError, MaskscopeError
from engine.grammar.judge.llama_parser import ROOT, check_gbnf
from engine.model import native_log
from engine.model.paths import default_model_path

# llama_token_data {int32 id; float logit; float p}, so NumPy can fill the ids at once.
_TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])


def load_vocab(path: Path) -> llama_cpp.llama_vocab_p:
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    with native_log.capture() as captured:
        model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    if not model:
        raise MaskscopeError(f"cannot read the vocabulary of {path}: {captured.errors}")
    return llama_cpp.llama_model_get_vocab(model)


def first_mask(vocab: llama_cpp.llama_vocab_p, gbnf: str) -> None:
    """Build the grammar sampler on the vocabulary and apply it to every token once."""
    with native_log.capture() as captured:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode(), ROOT.encode())
    if not sampler:
        detail = captured.errors or "llama.cpp rejected the grammar without saying why"
        raise GrammarError("llama.cpp rejected the grammar", detail)
    n = int(llama_cpp.llama_vocab_n_tokens(vocab))
    data = (llama_cpp.llama_token_data * n)()
    np.frombuffer(data, dtype=_TOKEN_DATA)["id"] = np.arange(n, dtype=np.int32)
    array = llama_cpp.llama_token_data_array(data=data, size=n, selected=-1, sorted=False)
    llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
    llama_cpp.llama_sampler_free(sampler)


def judge(vocab: llama_cpp.llama_vocab_p, gbnf: str) -> dict:
    try:
        check_gbnf(gbnf)  # parsed alone first: its messages are the clearest llama.cpp has
        first_mask(vocab, gbnf)
    except GrammarError as exc:
        return {"ok": False, "message": exc.message, "detail": exc.detail}
    return {"ok": True}


def _reply(channel: IO[str], answer: dict) -> None:
    channel.write(json.dumps(answer) + "\n")
    channel.flush()


def main() -> int:
    # The replies get a private copy of stdout, and fd 1 goes to stderr: a native library that
    # prints to stdout cannot corrupt the answers.
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    native_log.install()
    llama_cpp.llama_backend_init()
    try:
        vocab = load_vocab(Path(sys.argv[1]) if len(sys.argv) > 1 else default_model_path())
    except MaskscopeError as exc:
        _reply(channel, {"ready": False, "error": str(exc)})
        return 2
    _reply(channel, {"ready": True})
    # On a thread, like the window's worker and the check's threads: the stack that llama.cpp's
    # recursive parser can exhaust is a thread's, often smaller than the main thread's.
    serving = threading.Thread(target=_serve, args=(vocab, channel), name="judge")
    serving.start()
    serving.join()
    return 0


def _serve(vocab: llama_cpp.llama_vocab_p, channel: IO[str]) -> None:
    for line in sys.stdin:
        _reply(channel, judge(vocab, json.loads(line)["gbnf"]))


if __name__ == "__main__":
    sys.exit(main())
