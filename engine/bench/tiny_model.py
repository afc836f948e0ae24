"""Tiny random-weight GGUF models: the adversary a grammar must survive.

A trained model rarely picks a lone byte token or a stray continuation byte, so a grammar
that lets one through still looks sound with it. A model with random weights picks
anything the mask leaves, in every tokenizer family. Each is built here with the `gguf`
package: llama.cpp's `llama` architecture, 2 layers of width 64, and the tokenizer of a
vocabulary-only file that llama-cpp-python's source distribution ships
(`vendor/llama.cpp/models/ggml-vocab-*.gguf`), or of the default Gemma 3 model.

Over Gemma's 262,144 tokens, such a model's forward pass is mostly its output layer (about
a millisecond or two on a CPU core): the bench's fast workload, what a GPU's forward pass
of a small model looks like to the step (engine/bench/measure.py). The tests use the
other families through tests/tiny_models.py.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter, ReaderField

from engine.llama_build.wheels import source_archive
from engine.model.paths import cache_dir

# Name -> vocabulary file in llama-cpp-python's sdist ("gemma3" is the default model's).
FAMILIES = {
    "llama-spm": "ggml-vocab-llama-spm.gguf",  # SentencePiece, space prefix on
    "phi-3": "ggml-vocab-phi-3.gguf",  # SentencePiece, no add_space_prefix key
    "llama-bpe": "ggml-vocab-llama-bpe.gguf",  # byte-level BPE (Llama 3)
    "qwen2": "ggml-vocab-qwen2.gguf",  # byte-level BPE
    "gemma3": "",  # SentencePiece with byte fallback, 262,144 tokens
    # llama-spm without the space prefix (as Gemma's tokenizer): a text tokenizes to its own
    # bytes, no " " before the first character. `maskscope check` feeds texts through it.
    "llama-spm-bare": "ggml-vocab-llama-spm.gguf",
}
# Tokenizer settings a family sets over its vocabulary file's.
_OVERRIDES: dict[str, dict[str, bool]] = {
    "llama-spm-bare": {"tokenizer.ggml.add_space_prefix": False},
}
WIDTH = 64
LAYERS = 2
HEADS = 4
FFN = 128
# Embedding scale: logits ~ N(0, 64 * 0.25**2), a spread that a sample at temperature 1
# follows to every part of the valid set, not one token per context.
SCALE = 0.25
_VERSION = 1  # bump when the recipe changes: built files are cached under it


def vocab_file(family: str) -> Path:
    """The family's vocabulary-only GGUF, taken once out of llama-cpp-python's sdist."""
    if family == "gemma3":
        from engine.model.paths import default_model_path

        return default_model_path()
    target = cache_dir() / "tiny-models" / "vocab" / FAMILIES[family]
    if not target.is_file():
        member = f"vendor/llama.cpp/models/{FAMILIES[family]}"
        with tarfile.open(source_archive()) as tar:
            for info in tar.getmembers():
                if info.name.endswith(member) and info.isfile():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    data = tar.extractfile(info).read()  # type: ignore[union-attr]
                    partial = target.with_suffix(".partial")
                    partial.write_bytes(data)
                    partial.replace(target)
                    break
            else:
                raise FileNotFoundError(f"{member} is not in {source_archive()}")
    return target


def tiny_model(family: str, seed: int = 0) -> Path:
    """A random-weight llama-architecture GGUF with `family`'s tokenizer (built once)."""
    target = cache_dir() / "tiny-models" / f"{family}-s{seed}-v{_VERSION}.gguf"
    if not target.is_file():
        partial = target.with_suffix(".partial")
        _write(vocab_file(family), partial, seed, _OVERRIDES.get(family, {}))
        partial.replace(target)
    return target


def _write(vocab: Path, out: Path, seed: int, overrides: dict[str, bool]) -> None:
    reader = GGUFReader(vocab)
    n_vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    writer = GGUFWriter(str(out), "llama")
    writer.add_uint32("llama.context_length", 1024)
    writer.add_uint32("llama.embedding_length", WIDTH)
    writer.add_uint32("llama.block_count", LAYERS)
    writer.add_uint32("llama.feed_forward_length", FFN)
    writer.add_uint32("llama.attention.head_count", HEADS)
    writer.add_uint32("llama.attention.head_count_kv", HEADS)
    writer.add_uint32("llama.rope.dimension_count", WIDTH // HEADS)
    writer.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5)
    for key, field in reader.fields.items():
        if key.startswith("tokenizer.") and "chat_template" not in key and key not in overrides:
            _copy_field(writer, key, field)
    for key, flag in overrides.items():
        writer.add_bool(key, flag)
    rng = np.random.default_rng(seed)

    def weights(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal(shape) * scale / np.sqrt(shape[-1])).astype(np.float32)

    writer.add_tensor(
        "token_embd.weight", (rng.standard_normal((n_vocab, WIDTH)) * SCALE).astype(np.float16)
    )
    writer.add_tensor("output_norm.weight", np.ones(WIDTH, dtype=np.float32))
    for i in range(LAYERS):
        for name in ("attn_norm", "ffn_norm"):
            writer.add_tensor(f"blk.{i}.{name}.weight", np.ones(WIDTH, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"blk.{i}.{name}.weight", weights(WIDTH, WIDTH))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(FFN, WIDTH))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(FFN, WIDTH))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(WIDTH, FFN))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _copy_field(writer: GGUFWriter, key: str, field: ReaderField) -> None:
    """One metadata field, copied with its exact types (token texts as raw bytes)."""
    main = field.types[0]
    if main == GGUFValueType.ARRAY:
        sub = field.types[-1]
        if sub == GGUFValueType.STRING:
            values = [bytes(field.parts[i]) for i in field.data]
        else:
            values = [v for i in field.data for v in field.parts[i].tolist()]
        writer.add_key_value(key, values, main, sub_type=sub)
    elif main == GGUFValueType.STRING:
        writer.add_key_value(key, bytes(field.parts[-1]), main)
    else:
        writer.add_key_value(key, field.parts[-1].tolist()[0], main)
