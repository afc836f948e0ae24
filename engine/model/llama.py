"""Load a GGUF with llama.cpp and run forward passes, through its C API.

The C API (not the high-level `Llama` class) keeps the hot path lean: the logits
are read as a zero-copy NumPy view, and no per-step history arrays are kept.
ctypes releases the GIL during each call, so another thread can compute a mask
while a forward pass runs.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import llama_cpp
import numpy as np

from engine.errors import ModelLoadError, PromptError
from engine.model import native_log
from engine.model.paths import default_model_path, note_model
from engine.model.tokens import readable_piece
from engine.settings import N_CTX, N_GPU_LAYERS, N_THREADS, ModelSettings

_GGUF_MAGIC = b"GGUF"
_N_BATCH = 512
_backend_ready = False


@dataclass(frozen=True, slots=True)
class ModelInfo:
    path: str
    name: str
    n_vocab: int
    n_layer: int
    n_layers_offloaded: int
    gpu_offload_supported: bool
    has_chat_template: bool
    n_ctx: int
    n_threads: int

    @property
    def offload_label(self) -> str:
        if not self.gpu_offload_supported:
            return "CPU only (this llama.cpp build has no GPU support)"
        return f"GPU: {self.n_layers_offloaded}/{self.n_layer + 1} layers offloaded"


def gpu_offload_supported() -> bool:
    return bool(llama_cpp.llama_supports_gpu_offload())


def check_gguf_file(path: Path) -> None:
    """Fail early, naming the file, for what llama.cpp would report obscurely."""
    if not path.exists():
        raise ModelLoadError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelLoadError(f"model path is not a file: {path}")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path}: {exc.strerror}") from None
    if len(magic) < 4:
        raise ModelLoadError(f"model file is empty or truncated: {path}")
    if magic != _GGUF_MAGIC:
        raise ModelLoadError(f"not a GGUF file (it starts with {_shown(magic)}, not GGUF): {path}")


def gguf_tensor_count(path: Path) -> int | None:
    """The tensor count in a GGUF's header (0 for a vocabulary-only file), or None when the
    header is too short to say: llama.cpp then reports what is wrong with the file."""
    with path.open("rb") as f:
        head = f.read(16)
    if len(head) < 16:
        return None
    version = int.from_bytes(head[4:8], "little")
    # GGUF v1 wrote the count as 32 bits, v2 and later as 64 (ggml/docs/gguf.md).
    size = 4 if version == 1 else 8
    return int.from_bytes(head[8 : 8 + size], "little")


def _shown(data: bytes) -> str:
    """Leading bytes as a reader would want them: text when they are printable ASCII
    (an HTML page saved in place of a download: "<!DO"), else hex."""
    if data.isascii() and data.decode("ascii").isprintable():
        return f'"{data.decode("ascii")}"'
    return "bytes " + " ".join(f"{b:02X}" for b in data)


def _check_sizes(settings: ModelSettings) -> None:
    """Refuse, with the setting's name, a size llama.cpp would wrap around or abort on."""
    sizes = (
        ("n_ctx", N_CTX, settings.n_ctx),
        ("n_gpu_layers", N_GPU_LAYERS, settings.n_gpu_layers),
        ("n_threads", N_THREADS, 1 if settings.n_threads is None else settings.n_threads),
    )
    for name, bounds, value in sizes:
        if value not in bounds:
            raise ModelLoadError(f"{name} must be from {bounds.low} to {bounds.high}, not {value}")


def _default_threads() -> int:
    # Every core: measured on 2 cores, the forward pass takes 15 ms with 2 threads against
    # 23 ms with 1, and the masks computed alongside it did not slow it down.
    return os.cpu_count() or 1


class LoadCancelled(ModelLoadError):
    """The load was stopped by its caller (a window closing) before it finished."""


class VocabularyOnly(ModelLoadError):
    """A forward pass was asked of a GGUF that holds only a tokenizer."""


class Model:
    """A loaded GGUF with one context, one sequence and a reusable token buffer."""

    def __init__(
        self, settings: ModelSettings, should_stop: Callable[[], bool] | None = None
    ) -> None:
        global _backend_ready
        native_log.install()
        if not _backend_ready:
            llama_cpp.llama_backend_init()
            _backend_ready = True
        path = Path(settings.path).expanduser() if settings.path else default_model_path()
        note_model(path)
        check_gguf_file(path)
        _check_sizes(settings)
        self.settings = settings
        self.path = path
        # A vocabulary-only GGUF (llama.cpp's models/ggml-vocab-*.gguf, or a production
        # model's tokenizer alone) is enough for `check` and `lint`: they feed texts through
        # grammars token by token and never run a forward pass.
        self.vocab_only = gguf_tensor_count(path) == 0
        self._stamp = _file_stamp(path)  # before the read: a change during it counts too
        self._model = self._load_weights(path, settings, should_stop)
        n_threads = settings.n_threads or _default_threads()
        self._ctx = None if self.vocab_only else self._new_context(n_threads)
        self.vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        if self._ctx:
            self._mem = llama_cpp.llama_get_memory(self._ctx)
            # The context the user asked for, not llama.cpp's padded one: --n-ctx 64 holds 64.
            self.n_ctx = min(settings.n_ctx, int(llama_cpp.llama_n_ctx(self._ctx)))
            self.n_batch = int(llama_cpp.llama_n_batch(self._ctx))
        else:
            self.n_ctx = self.n_batch = 0
        self._one = (llama_cpp.llama_token * 1)()
        # One buffer per thread: a batch of sequences makes its records on several.
        self._piece_bufs = threading.local()
        self.n_past = 0
        self._logits_address: int | None = None
        self._logits_view = np.empty(0, dtype=np.float32)
        template = llama_cpp.llama_model_chat_template(self._model, None)
        self.chat_template: bytes | None = template or None
        self.info = self._info(n_threads)
        self.eog_ids = np.array(
            [t for t in range(self.n_vocab) if llama_cpp.llama_vocab_is_eog(self.vocab, t)],
            dtype=np.int32,
        )

    def _load_weights(
        self, path: Path, settings: ModelSettings, should_stop: Callable[[], bool] | None
    ) -> llama_cpp.llama_model_p:
        mparams = llama_cpp.llama_model_default_params()
        n_gpu = settings.n_gpu_layers
        mparams.n_gpu_layers = 999 if n_gpu < 0 else n_gpu
        mparams.vocab_only = self.vocab_only
        # Read the weights into memory, never map the file: a mapped GGUF truncated or
        # rewritten in place while loaded (a re-download, a copy over it) killed the process
        # with SIGBUS at the next forward pass. Measured on 2 cores: load 0.85-1.15 s mapped,
        # 1.2-1.25 s read, with the same peak RSS (~400 MB).
        mparams.load_mode = llama_cpp.LLAMA_LOAD_MODE_NONE
        if should_stop is not None:
            # llama.cpp asks between tensors whether to go on: a window closing mid-load
            # (1.2-1.7 s on 2 busy cores) then waits one tensor, not the whole read.
            keep_going = llama_cpp.llama_progress_callback(lambda _done, _data: not should_stop())
            mparams.progress_callback = keep_going
        with native_log.capture() as captured:
            model = llama_cpp.llama_model_load_from_file(str(path).encode(), mparams)
        if not model and should_stop is not None and should_stop():
            raise LoadCancelled(f"the load of {path.name} was stopped")
        if not model:
            reason = _root_cause(captured.errors) or "llama.cpp could not read it"
            raise ModelLoadError(f"cannot load model {path}: {reason}")
        return model

    def _new_context(self, n_threads: int) -> llama_cpp.llama_context_p:
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = self.settings.n_ctx
        # llama.cpp cuts the batch to the context it was asked for, then pads the context
        # up (64 -> 256), and aborts on a batch longer than the cut one. Asking for the cut
        # size, and chunking prompts by what llama.cpp reports, keeps every batch inside it.
        cparams.n_batch = cparams.n_ubatch = min(_N_BATCH, self.settings.n_ctx)
        cparams.n_threads = n_threads
        cparams.n_threads_batch = max(n_threads, os.cpu_count() or 1)
        cparams.no_perf = True
        with native_log.capture() as captured:
            ctx = llama_cpp.llama_init_from_model(self._model, cparams)
        if not ctx:
            self.close()  # frees the model and forgets it, so __del__ cannot free it again
            reason = _root_cause(captured.errors) or "context creation failed"
            raise ModelLoadError(f"cannot create a context for {self.path}: {reason}")
        return ctx

    def _info(self, n_threads: int) -> ModelInfo:
        n_gpu = self.settings.n_gpu_layers
        n_layer = int(llama_cpp.llama_model_n_layer(self._model))
        supported = gpu_offload_supported()
        offloaded = 0
        if supported and not self.vocab_only:
            offloaded = n_layer + 1 if n_gpu < 0 else min(n_gpu, n_layer + 1)
        return ModelInfo(
            path=str(self.path),
            name=self.path.name,
            n_vocab=self.n_vocab,
            n_layer=n_layer,
            n_layers_offloaded=offloaded,
            gpu_offload_supported=supported,
            has_chat_template=self.chat_template is not None,
            n_ctx=self.n_ctx,
            n_threads=n_threads,
        )

    @classmethod
    def load(
        cls, settings: ModelSettings | None = None, should_stop: Callable[[], bool] | None = None
    ) -> Model:
        """Load the model; `should_stop()` returning True ends a load under way with
        LoadCancelled."""
        return cls(settings or ModelSettings(), should_stop)

    def file_change(self) -> str | None:
        """Why the file at self.path is no longer the one loaded (deleted, replaced or
        rewritten), or None when it is the same. The loaded weights stay usable either way."""
        stamp = _file_stamp(self.path)
        if stamp == self._stamp:
            return None
        if stamp is None:
            return f"the model file was deleted since it was loaded: {self.path}"
        return f"the model file changed since it was loaded: {self.path}"

    # -- tokens -----------------------------------------------------------------

    def tokenize(
        self, text: str, add_special: bool = True, parse_special: bool = True
    ) -> list[int]:
        """Token ids; `parse_special=False` reads text like `<eos>` as plain characters."""
        data = text.encode("utf-8")
        cap = len(data) + 16
        buf = (llama_cpp.llama_token * cap)()
        n = llama_cpp.llama_tokenize(
            self.vocab, data, len(data), buf, cap, add_special, parse_special
        )
        if n < 0:
            cap = -n
            buf = (llama_cpp.llama_token * cap)()
            n = llama_cpp.llama_tokenize(
                self.vocab, data, len(data), buf, cap, add_special, parse_special
            )
        return list(buf[:n])

    @lru_cache(maxsize=65536)  # noqa: B019 - one Model per process, lives as long as it
    def piece(self, token: int) -> bytes:
        """The bytes the token adds to the output (special tokens as their text)."""
        buf = getattr(self._piece_bufs, "buf", None)
        if buf is None:
            buf = self._piece_bufs.buf = ctypes.create_string_buffer(256)
        return _piece(self.vocab, buf, token)

    @lru_cache(maxsize=65536)  # noqa: B019 - one Model per process, lives as long as it
    def output_text(self, token: int) -> str:
        """What the token adds to the output: nothing for an end token, U+FFFD for bytes
        that are only part of a character."""
        return "" if self.is_eog(token) else self.piece(token).decode("utf-8", errors="replace")

    @lru_cache(maxsize=65536)  # noqa: B019 - one Model per process, lives as long as it
    def readable(self, token: int) -> str:
        """The display form. A byte-fallback token shows as its byte (<0x22>): the vocabulary
        also has an ordinary token for the same text, and the two must read differently."""
        attr = llama_cpp.llama_vocab_get_attr(self.vocab, token)
        if attr & llama_cpp.LLAMA_TOKEN_ATTR_BYTE:
            return "".join(f"<0x{b:02X}>" for b in self.piece(token))
        return readable_piece(self.piece(token), special=self.is_special(token))

    def is_user_defined(self, token: int) -> bool:
        """A token added to the vocabulary as a whole (Gemma's `</iframe>`, for one)."""
        attr = llama_cpp.llama_vocab_get_attr(self.vocab, token)
        return bool(attr & llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED)

    def is_byte(self, token: int) -> bool:
        """A byte-fallback token (<0x41>), which spells one byte of the text."""
        attr = llama_cpp.llama_vocab_get_attr(self.vocab, token)
        return bool(attr & llama_cpp.LLAMA_TOKEN_ATTR_BYTE)

    def is_special(self, token: int) -> bool:
        attr = llama_cpp.llama_vocab_get_attr(self.vocab, token)
        return bool(
            attr & (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN)
        )

    @property
    def has_spare_compute(self) -> bool:
        """True when work beside a forward pass does not slow it: a GPU runs the layers,
        or llama.cpp leaves a CPU core free."""
        return self.info.n_layers_offloaded > 0 or self.info.n_threads < (os.cpu_count() or 1)

    def is_eog(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    @property
    def handle(self) -> llama_cpp.llama_model_p:
        """The loaded llama_model, for a second context on the same weights (a batch)."""
        return self._model

    def apply_chat_template(self, user_text: str) -> str:
        """The prompt wrapped in the GGUF's own chat template, ready for the assistant turn."""
        if self.chat_template is None:
            raise ModelLoadError(f"{self.path.name} has no chat template")
        msg = (llama_cpp.llama_chat_message * 1)()
        role, content = b"user", user_text.encode("utf-8")
        msg[0].role, msg[0].content = role, content
        size = len(content) * 2 + 512
        buf = ctypes.create_string_buffer(size)
        n = llama_cpp.llama_chat_apply_template(self.chat_template, msg, 1, True, buf, size)
        if n > size:
            buf = ctypes.create_string_buffer(n)
            n = llama_cpp.llama_chat_apply_template(self.chat_template, msg, 1, True, buf, n)
        if n < 0:
            raise ModelLoadError(f"llama.cpp does not know the chat template of {self.path.name}")
        return buf.raw[:n].decode("utf-8", errors="replace")

    # -- forward passes -----------------------------------------------------------

    def reset(self) -> None:
        """Forget the sequence (KV cache), ready for a new prompt."""
        self._need_weights()
        llama_cpp.llama_memory_clear(self._mem, True)
        self.n_past = 0

    def eval_prompt(self, tokens: list[int]) -> None:
        """Run the prompt in batches llama.cpp accepts; a size it would abort on raises."""
        self._need_weights()
        if not tokens:  # no logits would follow, and reading them would crash
            raise PromptError("the prompt is empty, and this model adds no start token")
        if len(tokens) + 1 > self.n_ctx:
            raise PromptError(
                f"the prompt has {len(tokens)} tokens, but the context holds {self.n_ctx} "
                "with room for the output: shorten the prompt or raise n_ctx (--n-ctx)"
            )
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            arr = (llama_cpp.llama_token * len(chunk))(*chunk)
            self._decode(llama_cpp.llama_batch_get_one(arr, len(chunk)), len(chunk))

    def eval_token(self, token: int) -> None:
        self._one[0] = token
        self._decode(llama_cpp.llama_batch_get_one(self._one, 1), 1)

    def _need_weights(self) -> None:
        if self.vocab_only:
            raise VocabularyOnly(
                f"{self.path.name} holds only a vocabulary (no weights): `check` and `lint` "
                "can use it, generating needs a model with weights"
            )

    def _decode(self, batch: llama_cpp.llama_batch, n: int) -> None:
        self._need_weights()
        if n > self.n_batch:  # llama.cpp would abort the process (GGML_ASSERT)
            raise PromptError(f"a batch of {n} tokens is more than llama.cpp's {self.n_batch}")
        if self.n_past + n > self.n_ctx:
            raise ModelLoadError(f"the context of {self.n_ctx} tokens is full")
        rc = llama_cpp.llama_decode(self._ctx, batch)
        if rc != 0:
            raise ModelLoadError(f"llama_decode failed with code {rc}")
        self.n_past += n

    def logits(self) -> np.ndarray:
        """Zero-copy view of the last position's logits; valid until the next decode."""
        ptr = llama_cpp.llama_get_logits_ith(self._ctx, -1)
        address = ctypes.cast(ptr, ctypes.c_void_p).value
        # llama.cpp reuses its output buffer, so the view is built once per address:
        # np.ctypeslib.as_array would build a new ctypes array type (~0.3 ms) every step.
        if address != self._logits_address:
            buffer = (ctypes.c_float * self.n_vocab).from_address(address)
            self._logits_view = np.frombuffer(buffer, dtype=np.float32)
            self._logits_address = address
        return self._logits_view

    def close(self) -> None:
        if getattr(self, "_ctx", None):
            llama_cpp.llama_free(self._ctx)
            self._ctx = None
        if getattr(self, "_model", None):
            llama_cpp.llama_model_free(self._model)
            self._model = None

    def __del__(self) -> None:
        self.close()


def _file_stamp(path: Path) -> tuple[int, int, int, int] | None:
    """What tells one file version from another without reading it: a file replaced has a
    new inode, one rewritten in place a new size or mtime."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _piece(vocab: llama_cpp.llama_vocab_p, buf: ctypes.Array, token: int) -> bytes:
    n = llama_cpp.llama_token_to_piece(vocab, token, buf, len(buf), 0, True)
    if n < 0:
        big = ctypes.create_string_buffer(-n)
        n = llama_cpp.llama_token_to_piece(vocab, token, big, len(big), 0, True)
        return big.raw[:n]
    return buf.raw[:n]


def _root_cause(text: str) -> str:
    """llama.cpp logs a failure from the inside out: the first error line says what went
    wrong ("insufficient memory (attempted to allocate 3072.00 MB)"), the last only that
    loading failed."""
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
