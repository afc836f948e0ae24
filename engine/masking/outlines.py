"""outlines-core: the masks Outlines applies, from the outlines compiler's regex.

outlines-core compiles the regex into an automaton over bytes and then walks every token
of the vocabulary through it from every state (its `Index`). After that a mask is a table
lookup (about 7 µs over Gemma's 262,144 tokens), but the walk is slow: on 2 cores the
bundled examples took from 0.25 s (currency) to 45 s (order) on Gemma's vocabulary. So:

- the Index is cached per (regex, vocabulary digest): in memory (the last few), and on disk
  under the user cache folder, keyed like the grammar judge's verdicts
  (engine/masking/outlines_disk.py), so that the next process reads it back in a fraction
  of a second; a build already under way is joined, not started twice;
- the build runs in Rust without a way to stop it from inside, so it runs in a child process
  with a memory limit (engine/sandbox.py), waited for on a daemon thread. Past the time
  limit a wait is a GrammarError "did not compile in N s" (a finding about the schema), and
  `should_stop()` ends a wait with LoadCancelled. Each build counts who waits for it: when
  the last one stops waiting (Stop, or its time limit), the child is killed at once rather
  than left to use a core for minutes. A build past its memory limit is a GrammarError,
  not a crash.
"""

from __future__ import annotations

import hashlib
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llama_cpp
import numpy as np
import outlines_core

from engine.errors import GrammarError
from engine.masking.outlines_disk import IndexDisk
from engine.sandbox import run_isolated

if TYPE_CHECKING:
    from engine.grammar.compile import CompiledSchema
    from engine.model.llama import Model

DEFAULT_INDEX_LIMIT_S = 300.0  # the order example takes about 45 s on 2 cores
# The build runs in a child (engine/sandbox.py): an Index for a string of `maxLength` 1024
# over 262,144 tokens grew past 8 GB, which took the window with it. A build ends at
# BUILD_LIMIT_S even with someone waiting longer, and as soon as nobody waits.
INDEX_MEMORY = 4 << 30
BUILD_LIMIT_S = DEFAULT_INDEX_LIMIT_S
_CACHED_INDEXES = 4  # an Index for a 262k vocabulary can hold over 100 MB
_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class OutlinesVocabulary:
    """outlines-core's view of the model's vocabulary, and what it leaves out."""

    vocabulary: outlines_core.Vocabulary
    digest: str  # of every (piece, ids) pair and the end token: part of the Index's key
    eos: int  # the end token outlines-core knows (it takes one)
    ends: np.ndarray  # every end-of-generation token, allowed wherever `eos` is


_vocabularies: weakref.WeakKeyDictionary[Model, OutlinesVocabulary] = weakref.WeakKeyDictionary()
_vocabulary_lock = threading.Lock()


def vocabulary_for(model: Model) -> OutlinesVocabulary:
    """Built once per model (about 0.9 s for 262,144 tokens)."""
    with _vocabulary_lock:
        found = _vocabularies.get(model)
        if found is None:
            found = _vocabularies[model] = _build_vocabulary(model)
        return found


def _build_vocabulary(model: Model) -> OutlinesVocabulary:
    """Token pieces as bytes (outlines-core matches them as UTF-8 byte strings, so a lone
    byte token is one byte of a character, as the model writes it).

    Left out: the end tokens (outlines-core refuses its EOS in the map and knows only one),
    tokens with no bytes, and special tokens, whose text (`<start_of_image>`) is not text
    the model writes; Outlines itself builds from the tokenizer's vocabulary without the
    added special tokens."""
    ends = {int(t) for t in model.eog_ids}
    if not ends:
        raise GrammarError("the model has no end-of-generation token for outlines-core")
    eos = min(ends)
    pieces: dict[bytes, list[int]] = {}
    for token in range(model.n_vocab):
        if token in ends or _special(model, token):
            continue
        piece = model.piece(token)
        if piece:
            pieces.setdefault(piece, []).append(token)
    digest = hashlib.sha256(repr((eos, sorted(pieces.items()))).encode()).hexdigest()
    vocabulary = outlines_core.Vocabulary(eos, pieces)
    return OutlinesVocabulary(vocabulary, digest, eos, np.array(sorted(ends), dtype=np.int64))


def _special(model: Model, token: int) -> bool:
    """Control tokens, and user-defined ones written like `<this>` (llguidance's rule)."""
    attr = llama_cpp.llama_vocab_get_attr(model.vocab, token)
    if attr & (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN):
        return True
    if attr & llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED:
        piece = model.piece(token)
        return piece.startswith(b"<") and piece.endswith(b">")
    return False


_IndexKey = tuple[str, str]
_indexes: OrderedDict[_IndexKey, outlines_core.Index] = OrderedDict()
_index_lock = threading.Lock()
disk = IndexDisk()  # the user cache's folder; a test gives one of its own


class _Build:
    """One Index build under way: its outcome, and how many callers wait for it. When the
    last one leaves, `abandoned` is set and the sandbox kills the child."""

    def __init__(self) -> None:
        self.future: Future[outlines_core.Index] = Future()
        self.waiters = 0
        self.abandoned = threading.Event()


_building: dict[_IndexKey, _Build] = {}


def index_for(
    regex: str,
    vocab: OutlinesVocabulary,
    should_stop: Callable[[], bool] | None = None,
    limit_s: float = DEFAULT_INDEX_LIMIT_S,
) -> outlines_core.Index:
    """The Index of `regex` over `vocab`, from a cache or built within `limit_s`."""
    key = (regex, vocab.digest)
    with _index_lock:
        if key in _indexes:
            _indexes.move_to_end(key)
            return _indexes[key]
        build = _building.get(key)
        if build is None or build.abandoned.is_set():  # one being killed is not joined
            build = _building[key] = _start_build(key, vocab.vocabulary)
        build.waiters += 1
    try:
        return _wait(build.future, should_stop or (lambda: False), limit_s)
    finally:
        _leave(build)


def _leave(build: _Build) -> None:
    with _index_lock:
        build.waiters -= 1
        if build.waiters == 0 and not build.future.done():
            build.abandoned.set()  # nobody wants it any more: the child goes now


def _start_build(key: _IndexKey, vocabulary: outlines_core.Vocabulary) -> _Build:
    build = _Build()

    def work() -> None:
        try:
            index = _read_or_build(key, vocabulary, build.abandoned.is_set)
        except BaseException as exc:  # handed to whoever waits
            _done(key, build)
            build.future.set_exception(exc)
            return
        _done(key, build, index)
        build.future.set_result(index)

    threading.Thread(target=work, name="outlines-index", daemon=True).start()
    return build


def _read_or_build(
    key: _IndexKey, vocabulary: outlines_core.Vocabulary, abandoned: Callable[[], bool]
) -> outlines_core.Index:
    regex, digest = key
    disk_key = disk.key(regex, digest)
    index = disk.read(disk_key)
    if index is None:
        index = run_isolated(
            "engine.masking.outlines", "index_here", (regex, vocabulary),
            what="outlines-core's index", limit_s=BUILD_LIMIT_S, memory_bytes=INDEX_MEMORY,
            should_stop=abandoned,
        )  # fmt: skip
        disk.write(disk_key, index)  # before the waiters hear: the next process finds it
    return index


def _done(key: _IndexKey, build: _Build, index: outlines_core.Index | None = None) -> None:
    with _index_lock:
        if _building.get(key) is build:  # not a newer build that replaced an abandoned one
            _building.pop(key)
        if index is not None:
            _indexes[key] = index
            while len(_indexes) > _CACHED_INDEXES:
                _indexes.popitem(last=False)


def index_here(regex: str, vocabulary: outlines_core.Vocabulary) -> outlines_core.Index:
    """The Index, built in this process (the sandbox's child, whose limits hold it)."""
    try:
        return outlines_core.Index(regex, vocabulary)
    except ValueError as exc:  # outlines-core's word on a regex it cannot index
        raise GrammarError("outlines-core cannot index the regex", str(exc)) from None


def _wait(
    future: Future[outlines_core.Index], should_stop: Callable[[], bool], limit_s: float
) -> outlines_core.Index:
    from engine.model.llama import LoadCancelled  # loads llama.cpp: proven by now

    deadline = time.monotonic() + limit_s
    while True:
        try:
            return future.result(timeout=max(0.0, min(_POLL_S, deadline - time.monotonic())))
        except FutureTimeout:
            if should_stop():
                raise LoadCancelled("the outlines index was not built: stopped") from None
            if time.monotonic() >= deadline:
                raise GrammarError(
                    f"outlines-core's index did not compile in {limit_s:g} s"
                ) from None
        except ValueError as exc:  # outlines-core's word on a regex it cannot index
            raise GrammarError("outlines-core cannot index the regex", str(exc)) from None


class OutlinesBackend:
    name = "outlines"
    cheap_full_mask = True  # a table lookup: about 7 µs over a 262k vocabulary

    def __init__(
        self,
        model: Model,
        compiled: CompiledSchema,
        should_stop: Callable[[], bool] | None = None,
        limit_s: float = DEFAULT_INDEX_LIMIT_S,
    ) -> None:
        if compiled.kind != "regex" or compiled.native is None:
            raise GrammarError(
                "the outlines backend runs the outlines compiler's regex only: "
                "choose the outlines compiler or another backend"
            )
        self._n_vocab = model.n_vocab
        self._vocab = vocabulary_for(model)
        index = index_for(compiled.native, self._vocab, should_stop, limit_s)
        self._guide = outlines_core.Guide(index)
        # Words wide enough for the model's ids and outlines-core's EOS, whichever is larger.
        width = max(self._n_vocab, self._vocab.eos + 1)
        self._bits = np.zeros((width + 31) // 32, dtype=np.int32)
        self._mask: np.ndarray | None = None

    def prepare(self, likely: np.ndarray | None = None) -> None:
        """Nothing to start ahead: the mask is a lookup."""

    def full_mask(self) -> np.ndarray:
        if self._mask is None:
            self._bits.fill(0)
            self._guide.write_mask_into(self._bits.ctypes.data, self._bits.size, 4)
            bits = np.unpackbits(self._bits.view(np.uint8), bitorder="little")
            mask = bits[: self._n_vocab].astype(bool)
            if mask[self._vocab.eos]:
                mask[self._vocab.ends] = True  # outlines-core knows one end token
            self._mask = mask
        return self._mask

    def check(self, token_ids: np.ndarray) -> np.ndarray:
        return self.full_mask()[token_ids]

    def accept(self, token: int) -> None:
        if token in self._vocab.ends:
            token = self._vocab.eos
        if not self._guide.accepts_tokens([token]):
            raise GrammarError(f"outlines-core refused token {token}")
        self._guide.advance(token, return_tokens=False)
        self._mask = None

    def reset(self) -> None:
        self._guide.reset()
        self._mask = None

    def close(self) -> None:
        """Nothing native to free by hand: the Index stays cached, the Guide is Python's."""
