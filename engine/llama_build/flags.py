"""The CMake flags llama-cpp-python is compiled with, one named set per candidate build.

llama-cpp-python's default build compiles llama.cpp with GGML_NATIVE (`-march=native`), so it
carries every instruction the building CPU reports, AMX included. On a virtual machine that
reports AMX but faults on it, every forward pass dies in `ldtilecfg`; and pip's wheel cache
(whose key ignores CMAKE_ARGS) carries such a build to other CPUs. Maskscope's default is
therefore a fixed x86-64-v3 baseline (AVX2, FMA, F16C, BMI2: every x86 CPU since 2013-2015):
the same wheel runs on every machine it may reach, and `make bench-cpu` measured it against
the native builds (docs/builds.md, "CPU build").
"""

from __future__ import annotations

import platform
import shlex
from dataclasses import dataclass

LLAMA_CPP_VERSION = "0.3.36"

_NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"


@dataclass(frozen=True)
class BuildFlags:
    name: str
    cmake_args: tuple[str, ...]
    description: str

    @property
    def cmake_args_text(self) -> str:
        return shlex.join(self.cmake_args)  # scikit-build-core splits CMAKE_ARGS with shlex


PORTABLE = BuildFlags(
    "portable",
    (
        "-DGGML_NATIVE=OFF",
        "-DGGML_SSE42=ON",
        "-DGGML_AVX=ON",
        "-DGGML_F16C=ON",
        "-DGGML_FMA=ON",
        "-DGGML_AVX2=ON",
        "-DGGML_BMI2=ON",
        "-DGGML_AVX512=OFF",
        "-DGGML_AMX_TILE=OFF",
        "-DGGML_AMX_INT8=OFF",
        "-DGGML_AMX_BF16=OFF",
    ),
    "fixed x86-64-v3 baseline: AVX2 + FMA + F16C + BMI2, no AVX-512, no AMX",
)
NATIVE_NO_AMX = BuildFlags(
    "native-no-amx",
    ("-DGGML_NATIVE=ON", f"-DCMAKE_C_FLAGS={_NO_AMX}", f"-DCMAKE_CXX_FLAGS={_NO_AMX}"),
    "-march=native with AMX switched off (keeps AVX-512 where the CPU has it)",
)
NATIVE = BuildFlags(
    "native",
    ("-DGGML_NATIVE=ON",),
    "pip's default: -march=native, AMX included where the CPU reports it",
)
# Off x86 there is no AMX and no fixed baseline worth choosing: llama.cpp's own default.
PLATFORM_DEFAULT = BuildFlags("default", (), "llama.cpp's default flags for this architecture")

CANDIDATES = {b.name: b for b in (PORTABLE, NATIVE_NO_AMX, NATIVE)}

GPU_ARGS = {
    "cpu": (),
    "cuda": ("-DGGML_CUDA=on",),
    "metal": ("-DGGML_METAL=on",),
    "vulkan": ("-DGGML_VULKAN=on",),
}


def is_x86() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64", "i686", "i386")


def chosen(gpu: str = "cpu") -> BuildFlags:
    """The build `make run` and `make test` install: portable CPU code plus the GPU backend."""
    base = PORTABLE if is_x86() else PLATFORM_DEFAULT
    if gpu == "cpu":
        return base
    return BuildFlags(f"{base.name}+{gpu}", base.cmake_args + GPU_ARGS[gpu], base.description)
