"""Which CPU variant llama.cpp's runtime dispatch (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS)
would load on this machine, found with ggml's own scoring code.

Each variant of that build carries `ggml_backend_score()` from ggml's cpu-feats.cpp, compiled
with the variant's feature macros; the loader picks the highest score. Compiling just that file
once per variant (seconds, not the minutes of a full build) and calling it gives the answer the
real loader would reach. ggml's scorer reads CPUID only, so a CPU that reports AMX scores the
AMX variant highest whether or not AMX runs.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.llama_build.wheels import source_archive

_GGML = "vendor/llama.cpp/ggml"
_VARIANT = re.compile(r"ggml_add_cpu_backend_variant\((\w+)((?:\s+\w+)*)\s*\)")


@dataclass(frozen=True)
class VariantScore:
    name: str
    features: tuple[str, ...]
    score: int  # 0: the CPU lacks a feature the variant needs


def x86_variants(cmake_text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The x86 variants ggml's src/CMakeLists.txt declares, in order, with their features."""
    variants = cmake_text[cmake_text.index("if (GGML_CPU_ALL_VARIANTS)") :]
    x86 = variants[variants.index('GGML_SYSTEM_ARCH STREQUAL "x86"') :]
    x86 = x86[: x86.index("elseif")]
    return [(m[1], tuple(m[2].split())) for m in _VARIANT.finditer(x86)]


def score_variants() -> list[VariantScore]:
    with tempfile.TemporaryDirectory(prefix="maskscope-dispatch-") as tmp:
        root = Path(tmp)
        with tarfile.open(source_archive()) as tar:
            top = tar.getnames()[0].split("/")[0]
            wanted = [m for m in tar.getmembers() if f"/{_GGML}/" in f"/{m.name}"]
            tar.extractall(root, members=wanted, filter="data")
        ggml = root / top / _GGML
        cmake = (ggml / "src" / "CMakeLists.txt").read_text(encoding="utf-8")
        return [_score(ggml, root, name, feats) for name, feats in x86_variants(cmake)]


def _score(ggml: Path, out: Path, name: str, features: tuple[str, ...]) -> VariantScore:
    lib = out / f"score-{name}.so"
    subprocess.run(
        ["g++", "-O1", "-shared", "-fPIC", "-std=c++17", "-DGGML_BACKEND_DL",
         "-DGGML_BACKEND_BUILD", "-DGGML_BACKEND_SHARED", *(f"-DGGML_{f}" for f in features),
         f"-I{ggml / 'include'}", f"-I{ggml / 'src'}",
         str(ggml / "src" / "ggml-cpu" / "arch" / "x86" / "cpu-feats.cpp"), "-o", str(lib)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return VariantScore(name, features, int(ctypes.CDLL(str(lib)).ggml_backend_score()))


def chosen_variant(scores: list[VariantScore]) -> VariantScore:
    return max(scores, key=lambda s: s.score)
