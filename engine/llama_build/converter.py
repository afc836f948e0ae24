"""Build llama.cpp's own JSON-Schema converter, the one llama-server runs, as a small command.

llama-server turns `json_schema` and `response_format` into GBNF with the C++ converter in
`common/json-schema-to-grammar.cpp` (and `common/json-schema.cpp`, which reads the schema).
llama-cpp-python's `llama_cpp.llama_grammar` is an old Python port of it that differs (it
enforces no integer bounds, allows other whitespace, reads `{}` and `allOf` otherwise), and
the sdist carries no `examples/json_schema_to_grammar.py` any more. So Maskscope's `llamacpp`
compiler runs the C++ converter itself: these sources, taken from the same sdist llama-server
is built from (engine/llama_build/server.py), compiled with `json_schema_to_grammar.cpp`
beside this file (stdin: a schema, stdout: its GBNF) into one small binary. Unused code of
common.cpp is dropped at link time (--gc-sections), so no libllama or ggml is needed; the
binary is cached under a key of the llama-cpp-python version, the machine, the compile
command and the wrapper's text. About 30 s on 2 cores; `make llama-converter` (part of
`make setup`) builds it.

Where it is not built (the packaged app, a checkout before `make setup`), the `llamacpp`
compiler falls back to llama-cpp-python's Python port and says so
(engine/grammar/compilers/llamacpp/converter.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from engine.errors import MaskscopeError
from engine.llama_build import cached_binary
from engine.llama_build.flags import LLAMA_CPP_VERSION
from engine.model.paths import cache_dir

BINARY = "json-schema-to-grammar"
BUILD_COMMAND = "make llama-converter"
WRAPPER = Path(__file__).with_name("json_schema_to_grammar.cpp")
# The sdist's folders the converter's sources include from, under vendor/llama.cpp.
_TREES = ("common/", "include/", "ggml/include/", "vendor/")
# common/json-schema-to-grammar.cpp and what it calls: the schema reader, common_json (on
# nlohmann/json), the trie and UTF-8 helpers, and common.cpp for string_split/join/repeat.
SOURCES = (
    "common/json-schema-to-grammar.cpp",
    "common/json-schema.cpp",
    "common/json.cpp",
    "common/trie.cpp",
    "common/unicode.cpp",
    "common/common.cpp",
)
INCLUDES = ("common", "include", "ggml/include", "vendor")
# Release as llama-server's build is (-O2 -DNDEBUG); the sections let the linker drop
# what common.cpp holds for the rest of llama.cpp.
CXX_FLAGS = ("-std=c++17", "-O2", "-DNDEBUG", "-ffunction-sections", "-fdata-sections")
LD_FLAGS = ("-Wl,--gc-sections", "-pthread")
# What a built converter must make of one schema: integer bounds, the server's whitespace.
PROOF_SCHEMA = '{"type": "integer", "minimum": 3, "maximum": 17}'
PROOF_GBNF = 'root ::= ([3-9] | "1" [0-7])\nspace ::= | " " | "\\n"{1,2} [ \\t]{0,20}\n'
PROOF_TIMEOUT_S = 60


class ConverterBuildError(MaskscopeError):
    """The converter did not build, or the built binary did not convert the proof schema."""

    kind = "llama.cpp converter build"


def compiler() -> str:
    return os.environ.get("CXX") or "c++"


def _key() -> str:
    parts = [LLAMA_CPP_VERSION, platform.machine(), compiler(), *CXX_FLAGS, *LD_FLAGS, *SOURCES]
    digest = hashlib.sha256("\n".join(parts).encode() + WRAPPER.read_bytes()).hexdigest()[:12]
    return f"{LLAMA_CPP_VERSION}-{digest}"


def converter_dir() -> Path:
    return cache_dir() / "llama-converter" / _key()


def cached_converter() -> Path | None:
    """The built converter for this llama-cpp-python version, or None when it is not built
    (or this is not a checkout: the wrapper's source, part of the key, is not there)."""
    if not WRAPPER.is_file():
        return None
    binary = converter_dir() / BINARY
    return binary if binary.is_file() else None


def proof_failure(binary: Path) -> str | None:
    """Why `binary` did not turn the proof schema into the server's grammar, or None."""
    try:
        done = subprocess.run(
            [str(binary)], input=PROOF_SCHEMA, capture_output=True, text=True,
            timeout=PROOF_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"{binary} did not finish in {PROOF_TIMEOUT_S} s"
    except OSError as e:
        return f"{binary} could not start: {e.strerror}"
    if done.returncode != 0 or done.stdout != PROOF_GBNF:
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        return f"{binary} did not convert the proof schema (exit {done.returncode}): {said}"
    return None


def compile_command(source: Path, out: Path) -> list[str]:
    return [
        *shlex.split(compiler()), *CXX_FLAGS,
        *(f"-I{source / d}" for d in INCLUDES),
        str(WRAPPER), *(str(source / s) for s in SOURCES),
        *LD_FLAGS, "-o", str(out),
    ]  # fmt: skip


def _extract(archive: Path, into: Path) -> Path:
    """Only the converter's trees of the 76 MB sdist; the llama.cpp folder they landed in."""
    root = f"llama_cpp_python-{LLAMA_CPP_VERSION}/vendor/llama.cpp/"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if any(m.name.startswith(root + t) for t in _TREES)]
        tar.extractall(into, members=members, filter="data")
    return into / root


def build_converter() -> Path:
    """Compile the converter from the sdist's llama.cpp and move it into the cache."""
    from engine.llama_build.wheels import source_archive  # pip download, if not cached

    target = converter_dir() / BINARY
    print(
        f">> Compiling llama.cpp's JSON-Schema converter from llama-cpp-python "
        f"{LLAMA_CPP_VERSION}'s sdist (the one llama-server runs); about 30 s on 2 cores",
        flush=True,
    )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="maskscope-llama-converter-") as tmp:
        source = _extract(source_archive(), Path(tmp))
        built = Path(tmp) / BINARY
        try:
            subprocess.run(compile_command(source, built), check=True)
        except (subprocess.CalledProcessError, OSError) as e:
            raise ConverterBuildError(f"llama.cpp's converter did not build: {e}") from e
        cached_binary.install(built, target)
    print(f">> Built {target} in {time.monotonic() - started:.0f} s", flush=True)
    return target


def ensure_converter(rebuild: bool = False) -> Path:
    """The cached converter, proven on one schema; built (again) when missing or failing."""
    cached = None if rebuild else cached_converter()
    return cached_binary.ensure(cached, proof_failure, build_converter, ConverterBuildError)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.llama_build.converter", description=__doc__)
    return cached_binary.main(
        p, lambda args: ensure_converter(args.rebuild), "llama.cpp's JSON-Schema converter", argv
    )


if __name__ == "__main__":
    sys.exit(main())
