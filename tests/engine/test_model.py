"""Loading GGUFs: the default model, and every way a file can be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import ModelLoadError
from engine.model.llama import Model
from engine.settings import ModelSettings


def test_default_model_reports_its_shape(model: Model):
    info = model.info
    assert info.n_vocab == 262144
    assert info.n_layer > 0
    assert info.gpu_offload_supported == (info.n_layers_offloaded > 0)
    assert "GPU" in info.offload_label or "CPU" in info.offload_label
    assert len(model.eog_ids) >= 1


def test_missing_file_names_the_file(tmp_path: Path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelLoadError, match=r"not found: .*nope\.gguf"):
        Model.load(ModelSettings(path=str(missing)))


def test_non_gguf_file_is_refused(tmp_path: Path):
    bogus = tmp_path / "model.gguf"
    bogus.write_text("this is not a model")
    with pytest.raises(ModelLoadError, match=r"not a GGUF file.*model\.gguf"):
        Model.load(ModelSettings(path=str(bogus)))


def test_empty_file_is_refused(tmp_path: Path):
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(ModelLoadError, match="empty or truncated"):
        Model.load(ModelSettings(path=str(empty)))


def test_truncated_gguf_fails_cleanly(model: Model, tmp_path: Path):
    cut = tmp_path / "cut.gguf"
    with open(model.path, "rb") as src:
        cut.write_bytes(src.read(4 * 1024 * 1024))
    with pytest.raises(ModelLoadError, match=r"cannot load model .*cut\.gguf") as caught:
        Model.load(ModelSettings(path=str(cut)))
    # llama.cpp's own first error (what it failed to read), not a generic "failed to load"
    assert "failed to read" in str(caught.value), caught.value


def test_tokens_round_trip_and_read_clearly(model: Model):
    ids = model.tokenize('{"a": 1}\n', add_special=False)
    assert b"".join(model.piece(t) for t in ids) == b'{"a": 1}\n'
    assert model.readable(int(model.eog_ids[0])).startswith("<")


def test_chat_template_wraps_the_prompt(model: Model):
    # The default GGUF is a base model without a template, so this borrows llama.cpp's
    # built-in Gemma template by name to exercise the same code path.
    saved = model.chat_template
    model.chat_template = b"gemma"
    try:
        text = model.apply_chat_template("Extract the currency.")
    finally:
        model.chat_template = saved
    assert "<start_of_turn>user" in text and text.rstrip().endswith("<start_of_turn>model")
    assert "Extract the currency." in text


def test_base_model_refuses_the_chat_template_clearly(model: Model):
    assert model.chat_template is None
    with pytest.raises(ModelLoadError, match="has no chat template"):
        model.apply_chat_template("hi")
