"""The llama-server `make llama-server` built (engine/llama_build/server.py): the cached binary
runs here, is linked statically, and a cached binary that crashes is compiled again."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from engine.llama_build import server as build
from engine.llama_build.flags import chosen
from engine.llama_build.wheels import wheel_dir
from tests.llama_server import LlamaServer, ServerNotUp


@pytest.fixture
def real_binary() -> Path:
    binary = build.installed_server()
    assert binary is not None, f"llama-server is not built: run `{build.BUILD_COMMAND}`"
    return binary


def test_the_cached_server_runs_and_carries_no_shared_llama_library(real_binary):
    assert build.run_failure(real_binary) is None
    done = subprocess.run(["ldd", str(real_binary)], capture_output=True, text=True, check=True)
    # BUILD_SHARED_LIBS=OFF: llama.cpp and ggml are inside the binary, so the cache holds one
    # file that no other build's libraries can replace under it.
    assert "libllama" not in done.stdout and "libggml" not in done.stdout, done.stdout


def test_the_cache_key_follows_every_flag():
    flags = chosen()
    one_less = dataclasses.replace(flags, cmake_args=flags.cmake_args[:-1])  # the same name
    assert build.server_dir(flags) != build.server_dir(one_less)
    assert build.server_dir(flags).parent.name == "llama-server"
    assert build.server_dir(flags).name.split("-")[0] == wheel_dir(flags).name.split("-")[0]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(build, "cache_dir", lambda: tmp_path)
    return tmp_path


def _crashing(path: Path) -> Path:
    """A stand-in for a binary built for instructions this CPU lacks: the real one runs here,
    and no CPU in reach faults on the portable flags, so a script dies as such a build does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nkill -SEGV $$\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_cached_server_that_crashes_is_compiled_again(real_binary, cache, monkeypatch):
    flags = chosen()
    _crashing(build.server_dir(flags) / build.BINARY)
    assert "crashed (SIGSEGV)" in build.run_failure(build.cached_server(flags))
    builds = []

    def compiled(f):  # a real compile takes 10 minutes: the real binary takes its place
        builds.append(f)
        return Path(shutil.copy2(real_binary, build.server_dir(f) / build.BINARY))

    monkeypatch.setattr(build, "build_server", compiled)
    binary = build.ensure_server(flags)
    assert builds == [flags] and build.run_failure(binary) is None
    assert build.ensure_server(flags) == binary and len(builds) == 1  # now taken from the cache


def test_a_fresh_build_that_crashes_is_an_error_and_leaves_no_binary(cache, monkeypatch):
    flags = chosen()
    monkeypatch.setattr(build, "build_server", lambda f: _crashing(build.server_dir(f) / "x"))
    with pytest.raises(build.ServerBuildError, match="crashed"):
        build.ensure_server(flags)
    assert not (build.server_dir(flags) / "x").exists()
    assert build.main([]) == 1  # one line on stderr, no traceback


def test_a_missing_server_names_the_make_target(cache, tmp_path):
    with pytest.raises(ServerNotUp, match="run `make llama-server`"):
        LlamaServer(tmp_path / "server.log").start()
