"""Build llama-cpp-python with chosen flags into Maskscope's own wheel cache, and install it.

pip's wheel cache is keyed by the package's name and version only, so a wheel built with other
CMAKE_ARGS (or on another CPU) would be reused silently. Maskscope builds with pip's cache
switched off and keeps each wheel under a key made of the version, the CMake flags and the
architecture, so a cached wheel is always the one these flags produce.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from engine.llama_build.flags import CANDIDATES, GPU_ARGS, LLAMA_CPP_VERSION, BuildFlags, chosen
from engine.llama_build.verdict import installed_flags, write_installed_flags
from engine.model.paths import cache_dir


def wheel_dir(flags: BuildFlags) -> Path:
    key = "\n".join([LLAMA_CPP_VERSION, platform.machine(), *flags.cmake_args])
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return cache_dir() / "llama-wheels" / f"{LLAMA_CPP_VERSION}-{flags.name}-{digest}"


def cached_wheel(flags: BuildFlags) -> Path | None:
    # A py3-none wheel (llama-cpp-python binds with ctypes); the platform is in the folder key.
    found = sorted(wheel_dir(flags).glob(f"llama_cpp_python-{LLAMA_CPP_VERSION}-*.whl"))
    return found[-1] if found else None


def source_archive() -> Path:
    """llama-cpp-python's source archive, downloaded once (pip's HTTP cache may serve it)."""
    folder = cache_dir() / "llama-wheels" / "source"
    found = sorted(folder.glob(f"llama_cpp_python-{LLAMA_CPP_VERSION}.tar.gz"))
    if found:
        return found[0]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-python",
         "--progress-bar", "off", "-d", str(folder), f"llama-cpp-python=={LLAMA_CPP_VERSION}"],
        check=True,
    )  # fmt: skip
    return next(folder.glob(f"llama_cpp_python-{LLAMA_CPP_VERSION}.tar.gz"))


def build_wheel(flags: BuildFlags) -> Path:
    """Compile llama-cpp-python from source with `flags` (minutes), bypassing pip's cache."""
    target = wheel_dir(flags)
    source = source_archive()
    with tempfile.TemporaryDirectory(prefix="maskscope-llama-") as tmp:
        env = dict(os.environ, CMAKE_ARGS=flags.cmake_args_text)
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        print(
            f">> Compiling llama-cpp-python {LLAMA_CPP_VERSION} ({flags.name}: "
            f"{flags.description}); about 6 minutes on 2 cores",
            flush=True,
        )
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
             "--progress-bar", "off", "-w", tmp, str(source)],
            env=env,
            check=True,
        )  # fmt: skip
        built = next(Path(tmp).glob("llama_cpp_python-*.whl"))
        target.mkdir(parents=True, exist_ok=True)
        partial = target / f"{built.name}.partial"
        shutil.copy2(built, partial)
        os.replace(partial, target / built.name)
    return target / built.name


def install(flags: BuildFlags, rebuild: bool = False) -> Path:
    """Install the wheel for `flags` into this Python, building it first when needed."""
    wheel = None if rebuild else cached_wheel(flags)
    if wheel is None:
        wheel = build_wheel(flags)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall",
         "--no-cache-dir", str(wheel)],
        check=True,
    )  # fmt: skip
    write_installed_flags(flags)  # `--if-missing` and `maskscope setup` read it
    print(f">> Installed llama-cpp-python {LLAMA_CPP_VERSION} ({flags.name}) from {wheel}")
    return wheel


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.llama_build.wheels")
    p.add_argument("--gpu", choices=sorted(GPU_ARGS), default="cpu")
    p.add_argument("--flags", choices=sorted(CANDIDATES), help="a candidate build (default: ours)")
    p.add_argument("--rebuild", action="store_true", help="compile again, ignoring every cache")
    p.add_argument(
        "--if-missing", action="store_true", help="skip if the installed build has these flags"
    )
    args = p.parse_args(argv)
    flags = CANDIDATES[args.flags] if args.flags else chosen(args.gpu)
    if args.if_missing and not args.rebuild:
        current = installed_flags()
        if current is not None and current.cmake_args == flags.cmake_args:
            return 0
    install(flags, rebuild=args.rebuild)
    return 0


if __name__ == "__main__":
    sys.exit(main())
