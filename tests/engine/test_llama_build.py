"""The llama.cpp build: portable flags, no AMX, and a crash reported instead of suffered.

A broken build is simulated with a real stand-in: a small shared library, preloaded into the
processes under test, that replaces ggml's graph computation with a segmentation fault. The
model loads and llama.cpp reports its features as usual; the first forward pass dies on the
signal, as the AMX build did. No real CPU in the test machines faults on its own build, so
this is the only way to reach that path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.llama_build import flags, verdict
from engine.llama_build.instructions import amx_instruction_count
from engine.llama_build.wheels import cached_wheel, wheel_dir

ROOT = Path(__file__).resolve().parents[2]
CURRENCY = ROOT / "resources" / "examples" / "currency.schema.json"
CRASH_C = r"""
#include <signal.h>
/* Interposes the ggml call at the heart of every forward pass (libllama calls it through
   the dynamic linker, so a preloaded definition wins). */
int ggml_backend_sched_graph_compute_async(void *sched, void *graph) {
    (void)sched; (void)graph;
    raise(SIGSEGV);
    return 0;
}
"""


@pytest.fixture(scope="module")
def crashing_preload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("standin")
    source = folder / "crash.c"
    source.write_text(CRASH_C, encoding="utf-8")
    lib = folder / "libcrash.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(lib), str(source)], check=True)
    return lib


def _run(
    args: list[str], preload: Path | None, timeout: float = 300
) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    if preload is not None:
        env["LD_PRELOAD"] = str(preload)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout
    )


def _assert_names_the_crash(message: str) -> None:
    assert "SIGSEGV" in message
    assert "make rebuild-llama" in message
    assert "This CPU reports:" in message
    assert "Compiled for: " in message and "AVX2" in message  # read before the crash
    assert "Traceback" not in message


@pytest.mark.slow  # a child process loads the model
def test_setup_fails_with_the_signal_the_features_and_the_fix(crashing_preload: Path) -> None:
    proc = _run(["-m", "engine.cli.main", "setup"], crashing_preload)
    assert proc.returncode == 3, proc.stderr
    _assert_names_the_crash(proc.stderr)
    assert "ran the model" not in proc.stdout  # never reports success


@pytest.mark.slow  # a child process loads the model
def test_the_verdict_is_cached_per_build(crashing_preload: Path) -> None:
    good = verdict.ensure_build_runs()
    assert verdict.cached_verdict(good.fingerprint) == good
    os.environ["LD_PRELOAD"] = str(crashing_preload)
    try:
        bad_key = verdict.fingerprint()
        with pytest.raises(verdict.BrokenBuildError):
            verdict.ensure_build_runs()
        cached = verdict.cached_verdict(bad_key)
    finally:
        del os.environ["LD_PRELOAD"]
    assert bad_key != good.fingerprint
    assert cached is not None and not cached.ok and "SIGSEGV" in cached.message
    assert verdict.cached_verdict(good.fingerprint) == good  # the good build's verdict stays


@pytest.mark.slow  # a child process loads the model
def test_generate_reports_the_broken_build_before_any_output(crashing_preload: Path) -> None:
    args = ["-m", "engine.cli.main", "generate", "--schema", str(CURRENCY), "--prompt", "x"]
    proc = _run(args, crashing_preload)
    assert proc.returncode == 3, proc.stderr
    _assert_names_the_crash(proc.stderr)
    assert proc.stdout == ""


@pytest.mark.slow  # a child process loads the model
def test_the_window_reports_the_broken_build_instead_of_dying(crashing_preload: Path) -> None:
    proc = _run(["-m", "app.main", "--autorun", "--quit-after-run"], crashing_preload)
    assert proc.returncode == 3, proc.stderr
    _assert_names_the_crash(proc.stderr)


@pytest.mark.slow  # a child process loads the model
def test_pytest_ends_with_one_failure_and_a_summary(crashing_preload: Path) -> None:
    decode = "tests/engine/test_decode.py::test_currency_is_always_one_of_the_enum_values"
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", decode]
    proc = _run(args, crashing_preload)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "1 failed" in out.splitlines()[-1]
    assert "llama.cpp build check" in out and "SIGSEGV" in out
    assert "Fatal Python error" not in out


def test_a_hung_check_is_reported_not_waited_for() -> None:
    from engine.model.paths import default_model_path

    judged = verdict.run_probe(default_model_path(), verdict.fingerprint(), timeout=0.05)
    assert not judged.ok
    assert "hung" in judged.message and "make rebuild-llama" in judged.message


def test_a_model_problem_is_not_blamed_on_the_build(tmp_path: Path) -> None:
    not_gguf = tmp_path / "bogus.gguf"
    not_gguf.write_bytes(b"\xb7\x00 not a model")
    with pytest.raises(verdict.MaskscopeError) as caught:
        verdict.run_probe(not_gguf, verdict.fingerprint())
    assert not isinstance(caught.value, verdict.BrokenBuildError)
    assert "not a GGUF" in str(caught.value)


def test_crash_message_for_a_library_that_dies_while_loading() -> None:
    message = verdict.crash_message(-11, [])
    assert "SIGSEGV" in message and "it died while loading" in message


@pytest.mark.skipif(not flags.is_x86(), reason="AMX exists on x86 only")
def test_installed_build_has_no_amx_instructions() -> None:
    lib = verdict.lib_dir() / "libggml-cpu.so"
    assert amx_instruction_count(lib) == 0
    installed = verdict.installed_flags()
    assert installed is not None, "llama-cpp-python was not installed by engine.llama_build"
    assert installed.cmake_args == flags.chosen().cmake_args


def test_amx_count_finds_amx_instructions(tmp_path: Path) -> None:
    """The scan itself can fail: an object with one tile instruction counts."""
    source = tmp_path / "amx.c"
    source.write_text('void f(const void *c) { __asm__ volatile("ldtilecfg (%0)" :: "r"(c)); }\n')
    obj = tmp_path / "amx.o"
    subprocess.run(["cc", "-c", str(source), "-o", str(obj)], check=True)
    assert amx_instruction_count(obj) == 1


def test_the_installed_wheel_is_found_in_the_cache() -> None:
    """`make` installed it from there, so the next fresh venv does not compile it again."""
    wheel = cached_wheel(flags.chosen())
    assert wheel is not None and wheel.parent == wheel_dir(flags.chosen())


def test_candidates_differ_and_the_pin_is_one() -> None:
    dirs = {wheel_dir(c) for c in flags.CANDIDATES.values()}
    assert len(dirs) == len(flags.CANDIDATES)  # flags are part of the cache key
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"llama-cpp-python=={flags.LLAMA_CPP_VERSION}"' in project
    assert "-DGGML_NATIVE=OFF" in flags.PORTABLE.cmake_args
    assert flags.chosen("cuda").cmake_args[-1] == "-DGGML_CUDA=on"
