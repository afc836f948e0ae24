"""Where a saved run came from: the model file, the versions, the compiler and the settings.

A run handed to someone else (a bug report, a report for a meeting) has to say what made
it, so that it can be made again and told apart from a run of another model or build.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import MaskscopeError
from engine.llama_build.describe import build_description, package_version
from engine.settings import GenerationSettings

_CHUNK = 1 << 20
# (resolved path, size, mtime in ns) -> sha256: a 250 MB GGUF is hashed once a session, and
# a file replaced in place (new size or mtime) is hashed again.
_DIGESTS: dict[tuple[str, int, int], str] = {}
UNCONSTRAINED = "none (unconstrained)"


@dataclass(frozen=True, slots=True)
class Provenance:
    model_file: str  # the GGUF's file name
    model_bytes: int
    model_sha256: str
    n_vocab: int | None  # the model's vocabulary size; None when it was not known
    llama_cpp_python: str
    llama_cpp_build: str  # how llama.cpp was built; "" when it could not be asked
    maskscope: str
    compiler: str  # what turned the schema into the grammar; UNCONSTRAINED for no mask
    backend: str  # what applied the grammar's mask; UNCONSTRAINED for no mask
    settings: dict[str, Any]  # GenerationSettings.to_json() of the run
    made_at: str  # ISO 8601, UTC, to the second

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Provenance:
        """Back from to_json(); keys a later Maskscope adds are ignored, missing ones raise
        KeyError."""
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})

    def rows(self) -> list[tuple[str, str]]:
        """Label and value of each fact but the settings, in reading order."""
        vocab = f"{self.n_vocab:,} tokens" if self.n_vocab is not None else "not recorded"
        return [
            ("Model file", self.model_file),
            ("Model size", f"{self.model_bytes:,} bytes ({self.model_bytes / 1e6:.1f} MB)"),
            ("Model SHA-256", self.model_sha256),
            ("Vocabulary", vocab),
            ("Compiler", self.compiler),
            ("Backend", self.backend),
            ("Maskscope", self.maskscope),
            ("llama-cpp-python", self.llama_cpp_python),
            ("llama.cpp build", self.llama_cpp_build or "not recorded"),
            ("Made", self.made_at),
        ]


def model_digest(path: str | Path) -> tuple[int, str]:
    """The file's size in bytes and its sha256, read in chunks; cached per (path, size,
    mtime), so only the first call for a file costs a read of it."""
    resolved = Path(path).expanduser().resolve()
    try:
        stat = resolved.stat()
        key = (str(resolved), stat.st_size, stat.st_mtime_ns)
        if key not in _DIGESTS:
            digest = hashlib.sha256()
            with resolved.open("rb") as f:
                while chunk := f.read(_CHUNK):
                    digest.update(chunk)
            _DIGESTS[key] = digest.hexdigest()
    except OSError as exc:
        raise MaskscopeError(f"cannot read model file {path}: {exc.strerror}") from None
    return stat.st_size, _DIGESTS[key]


@functools.cache
def _versions() -> tuple[str, str, str]:
    """llama-cpp-python's version, the llama.cpp build, Maskscope's version.

    None of them changes inside one process, so they are asked once. Asking the build loads
    llama.cpp, proven by then in every caller (a run has been made)."""
    try:
        build = build_description()
    except (ImportError, OSError, AttributeError):
        build = ""
    return package_version("llama_cpp_python"), build, package_version("maskscope")


def provenance_of(
    model_path: str | Path,
    settings: GenerationSettings,
    n_vocab: int | None = None,
    now: datetime | None = None,
) -> Provenance:
    """The provenance of a run made with the model at `model_path` and `settings`.

    The first call for a model file hashes it (about a second for 250 MB); later calls for
    the same unchanged file cost a stat. Raises MaskscopeError when the file cannot be read.
    """
    size, sha = model_digest(model_path)
    llama_cpp_python, build, maskscope = _versions()
    masked = settings.constrained
    made = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    return Provenance(
        model_file=Path(model_path).name,
        model_bytes=size,
        model_sha256=sha,
        n_vocab=n_vocab,
        llama_cpp_python=llama_cpp_python,
        llama_cpp_build=build,
        maskscope=maskscope,
        compiler=settings.compiler if masked else UNCONSTRAINED,
        backend=settings.backend if masked else UNCONSTRAINED,
        settings=settings.to_json(),
        made_at=made.isoformat(),
    )
