"""Build llama.cpp's own `llama-server` from the source llama-cpp-python ships, and cache it.

The server is compiled from `vendor/llama.cpp` inside the llama-cpp-python sdist that Maskscope
already builds its wheel from, so it is the same llama.cpp version with the same CPU flags
(engine/llama_build/flags.py). Only the `llama-server` target is built, statically linked, and
kept under a key made like the wheel's: a cached binary is always the one these flags produce.

What is left out, and why (tools/ui/CMakeLists.txt and scripts/ui-assets.cmake in the sdist):
the web UI. With LLAMA_BUILD_UI off (no npm build) and LLAMA_USE_PREBUILT_UI off (no download
from the Hugging Face bucket, which these machines cannot reach) the server embeds an empty
asset table: the HTTP API is whole, only the chat page at `/` is missing. LLAMA_OPENSSL is off
too: HTTPS is only for fetching models by URL (`-hf`, `-mu`), and a local GGUF needs none.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from engine.errors import MaskscopeError
from engine.llama_build import cached_binary
from engine.llama_build.flags import GPU_ARGS, LLAMA_CPP_VERSION, BuildFlags, chosen
from engine.llama_build.verdict import installed_flags
from engine.llama_build.wheels import source_archive
from engine.model.paths import cache_dir

BINARY = "llama-server"
BUILD_COMMAND = "make llama-server"
VERSION_TIMEOUT_S = 60
# Beside the wheel's CPU (and GPU) flags: the server alone, static, and nothing fetched.
SERVER_CMAKE_ARGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)


class ServerBuildError(MaskscopeError):
    """llama-server did not build, or the built binary crashed when it ran."""

    kind = "llama-server build"


def cmake_args(flags: BuildFlags) -> tuple[str, ...]:
    return (*flags.cmake_args, *SERVER_CMAKE_ARGS)


def server_dir(flags: BuildFlags) -> Path:
    key = "\n".join([LLAMA_CPP_VERSION, platform.machine(), *cmake_args(flags)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_dir() / "llama-server" / f"{LLAMA_CPP_VERSION}-{flags.name}-{digest}"


def cached_server(flags: BuildFlags) -> Path | None:
    binary = server_dir(flags) / BINARY
    return binary if binary.is_file() else None


def installed_server() -> Path | None:
    """The cached server built with the flags of the installed wheel (the portable CPU build
    where Maskscope did not install it), or None when it has not been built."""
    return cached_server(installed_flags() or chosen())


def run_failure(binary: Path) -> str | None:
    """Why `binary --version` failed in a child process, or None when it ran."""
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return f"{binary} --version did not finish in {VERSION_TIMEOUT_S} s"
    except OSError as e:
        return f"{binary} could not start: {e.strerror}"
    if done.returncode < 0:
        return f"{binary} --version crashed ({signal.Signals(-done.returncode).name})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{binary} --version exited {done.returncode}: {last}"
    return None


def _configure_and_build(source: Path, build: Path, flags: BuildFlags) -> Path:
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    subprocess.run(["cmake", "-S", str(source), "-B", str(build), *cmake_args(flags)], check=True)
    subprocess.run(
        ["cmake", "--build", str(build), "--target", BINARY, "-j", jobs], check=True
    )  # fmt: skip
    return build / "bin" / BINARY


def build_server(flags: BuildFlags) -> Path:
    """Compile llama-server with `flags` (minutes) and move it into the cache atomically."""
    target = server_dir(flags) / BINARY
    print(
        f">> Compiling llama-server from llama-cpp-python {LLAMA_CPP_VERSION}'s llama.cpp "
        f"({flags.name}: {flags.description}); about 10 minutes on 2 cores",
        flush=True,
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="maskscope-llama-server-") as tmp:
        with tarfile.open(source_archive()) as archive:
            archive.extractall(tmp, filter="data")
        source = Path(tmp) / f"llama_cpp_python-{LLAMA_CPP_VERSION}" / "vendor" / "llama.cpp"
        try:
            built = _configure_and_build(source, Path(tmp) / "build", flags)
        except (subprocess.CalledProcessError, OSError) as e:
            raise ServerBuildError(f"llama-server did not build: {e}") from e
        cached_binary.install(built, target)
    print(f">> Built {target} in {time.monotonic() - started:.0f} s", flush=True)
    return target


def ensure_server(flags: BuildFlags, rebuild: bool = False) -> Path:
    """The cached llama-server for `flags`, proven to run here; built (once more) if needed.

    A cached binary that crashes (copied from another CPU, or a broken build) is compiled
    again with the same portable flags, ignoring the cache, as `make rebuild-llama` does.
    """
    cached = None if rebuild else cached_server(flags)
    return cached_binary.ensure(cached, run_failure, lambda: build_server(flags), ServerBuildError)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.llama_build.server", description=__doc__)
    p.add_argument("--gpu", choices=sorted(GPU_ARGS), default="cpu")
    return cached_binary.main(
        p, lambda args: ensure_server(chosen(args.gpu), args.rebuild), "llama-server", argv
    )


if __name__ == "__main__":
    sys.exit(main())
