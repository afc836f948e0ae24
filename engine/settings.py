"""Run settings shared by the CLI, the window and the benchmark."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

BACKENDS = ("llguidance", "llamacpp")
DEFAULT_BACKEND = "llguidance"


@dataclass(frozen=True, slots=True)
class ModelSettings:
    path: str | None = None  # None means the default model (Gemma 3 270M, Q4_K_M)
    n_gpu_layers: int = -1  # -1 offloads every layer where the build supports a GPU
    n_ctx: int = 4096
    n_threads: int | None = None  # None lets the engine pick


@dataclass(frozen=True, slots=True)
class GenerationSettings:
    max_tokens: int = 256
    temperature: float = 0.7  # 0 means greedy
    seed: int = 0
    top_k: int = 10  # candidates kept per step in each StepRecord
    backend: str = DEFAULT_BACKEND
    exact_mask: bool = False  # llamacpp: check the full vocabulary, not just the probable head
    cross_check: bool = False  # compute the other backend's mask too and report disagreements
    chat_template: bool = False  # wrap the prompt in the GGUF's chat template
    keep_full: bool = (
        False  # attach full-vocabulary P and valid mask to each record (tests, audits)
    )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
