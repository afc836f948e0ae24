"""A saved run's provenance: the model file's size and hash (hashed once), the versions, the
compiler and backend, and every setting."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime

import pytest

from engine.errors import MaskscopeError
from engine.runs.provenance import UNCONSTRAINED, Provenance, model_digest, provenance_of
from engine.settings import GenerationSettings


@pytest.fixture
def gguf(tmp_path):
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 5000)
    return path


def test_the_digest_is_the_files_sha256_and_size(gguf):
    data = gguf.read_bytes()
    assert model_digest(gguf) == (len(data), hashlib.sha256(data).hexdigest())


def test_the_digest_is_computed_once_per_path_size_and_mtime(gguf):
    size, first = model_digest(gguf)
    stat = gguf.stat()
    gguf.write_bytes(b"X" * size)  # other bytes, the same size
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert model_digest(gguf) == (size, first), "an unchanged (path, size, mtime) rehashed"
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert model_digest(gguf)[1] == hashlib.sha256(b"X" * size).hexdigest()


def test_a_missing_model_file_is_one_clear_error(tmp_path):
    with pytest.raises(MaskscopeError, match=r"cannot read model file .*none\.gguf"):
        provenance_of(tmp_path / "none.gguf", GenerationSettings())


def test_provenance_names_the_model_versions_compiler_backend_and_every_setting(gguf):
    import llama_cpp

    settings = GenerationSettings(seed=7, temperature=0.0, compiler="llamacpp", backend="llamacpp")
    when = datetime(2026, 12, 1, 17, 30, 5, 123456, tzinfo=UTC)
    p = provenance_of(gguf, settings, n_vocab=262144, now=when)
    assert (p.model_file, p.model_bytes) == ("tiny.gguf", gguf.stat().st_size)
    assert p.model_sha256 == hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert p.n_vocab == 262144
    assert p.llama_cpp_python == llama_cpp.__version__
    assert "compiled with" in p.llama_cpp_build
    assert p.maskscope == "0.1.0"
    assert (p.compiler, p.backend) == ("llamacpp", "llamacpp")
    assert p.settings == settings.to_json() and p.settings["seed"] == 7
    assert p.made_at == "2026-12-01T17:30:05+00:00"


def test_an_unconstrained_run_names_no_compiler_or_backend(gguf):
    p = provenance_of(gguf, GenerationSettings(constrained=False))
    assert (p.compiler, p.backend) == (UNCONSTRAINED, UNCONSTRAINED)
    assert p.settings["constrained"] is False
    assert datetime.fromisoformat(p.made_at).utcoffset().total_seconds() == 0


def test_provenance_round_trips_and_ignores_keys_it_does_not_know(gguf):
    p = provenance_of(gguf, GenerationSettings())
    assert Provenance.from_json(p.to_json()) == p
    assert Provenance.from_json({**p.to_json(), "added_later": 1}) == p
    labels = [label for label, _ in p.rows()]
    assert labels[:3] == ["Model file", "Model size", "Model SHA-256"]
