"""Prove that the installed llama.cpp build runs on this CPU before anything trusts it.

A build compiled for instructions this machine cannot execute (AMX on a virtual machine that
reports it, a wheel that pip's cache or a copied venv brought from another CPU) kills the
process that runs it, with no Python exception to catch. So the proof runs in a child process
(engine/llama_build/probe.py), and its verdict is kept next to the build, keyed by the
libraries' content and the CPU's model and flags: later checks cost one hash of the libraries.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import re
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.errors import MaskscopeError
from engine.llama_build.flags import BuildFlags
from engine.model.paths import cache_dir, default_model_path

REBUILD_COMMAND = "make rebuild-llama"
PROBE_TIMEOUT_S = 300
_BUILD_FILE = "maskscope-build.json"
_VERDICT_FILE = "maskscope-verdicts.json"
_VERDICTS_KEPT = 8
# Beside AMX and AVX-512, the CPU flags worth naming when a build dies.
_NOT_INSTRUCTIONS = ("LLAMAFILE", "OPENMP", "REPACK")
_NAMED_FLAGS = (("avx_vnni", "AVX-VNNI"), ("avx2", "AVX2"), ("fma", "FMA"), ("f16c", "F16C"))


class BrokenBuildError(MaskscopeError):
    """The installed llama.cpp build crashed (or hung) when it ran the model."""

    kind = "llama.cpp build"


@dataclass(frozen=True)
class BuildVerdict:
    """How the check process ended: facts only, so a cached verdict reads in today's words."""

    ok: bool
    fingerprint: str
    compiled: str = ""  # llama.cpp's compiled CPU features, space-separated
    returncode: int | None = 0  # None: it hung

    @property
    def message(self) -> str:
        return "" if self.ok else crash_message(self.returncode, self.compiled.split())


def lib_dir() -> Path | None:
    """The folder llama-cpp-python loads its libraries from, found without loading them."""
    override = os.environ.get("LLAMA_CPP_LIB_PATH")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "lib"


def write_installed_flags(flags: BuildFlags) -> None:
    folder = lib_dir()
    if folder is not None:
        info = {"flags": flags.name, "cmake_args": list(flags.cmake_args)}
        (folder / _BUILD_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")


def installed_flags() -> BuildFlags | None:
    """The flags Maskscope installed the build with, or None for a build it did not make."""
    folder = lib_dir()
    try:
        info = json.loads((folder / _BUILD_FILE).read_text(encoding="utf-8"))
        return BuildFlags(info["flags"], tuple(info["cmake_args"]), "")
    except (TypeError, OSError, ValueError, KeyError):
        return None


def cpu_description() -> tuple[str, list[str]]:
    """The CPU's model name and flags (Linux); elsewhere what `platform` knows."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or platform.machine(), []
    name = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
    flags = re.search(r"^(?:flags|Features)\s*:\s*(.*)$", text, re.M)
    return (name.group(1).strip() if name else ""), (flags.group(1).split() if flags else [])


def fingerprint() -> str:
    """Hash of every library in the build folder, the CPU, the Python that loads them, and any
    library preloaded into it (which can replace what the build runs)."""
    digest = hashlib.sha256()
    folder = lib_dir()
    if folder is not None and folder.is_dir():
        for lib in sorted(folder.iterdir()):
            if not re.search(r"\.(so(\.\d+)*|dylib|dll)$", lib.name):
                continue
            digest.update(lib.name.encode())
            # Versioned names link to one file: hash its bytes once.
            digest.update(os.readlink(lib).encode() if lib.is_symlink() else lib.read_bytes())
    name, flags = cpu_description()
    preload = os.environ.get("LD_PRELOAD", "")
    digest.update("\n".join([name, *flags, sys.executable, preload]).encode())
    return digest.hexdigest()


def _verdict_paths() -> list[Path]:
    folder = lib_dir()
    fallback = cache_dir() / _VERDICT_FILE
    return [folder / _VERDICT_FILE, fallback] if folder is not None else [fallback]


def _read_verdicts(path: Path) -> dict[str, dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cached_verdict(key: str) -> BuildVerdict | None:
    for path in _verdict_paths():
        found = _read_verdicts(path).get(key)
        if isinstance(found, dict):
            try:
                return BuildVerdict(**found)
            except TypeError:
                continue  # written by another version of this module
    return None


def _store(verdict: BuildVerdict) -> None:
    for path in _verdict_paths():
        kept = _read_verdicts(path)
        kept.pop(verdict.fingerprint, None)
        # The newest few: a build, a GPU build, a preloaded library under test.
        entries = [
            *list(kept.items())[-(_VERDICTS_KEPT - 1) :],
            (verdict.fingerprint, asdict(verdict)),
        ]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(dict(entries), indent=1), encoding="utf-8")
            return
        except OSError:
            continue  # a read-only install: the user cache folder holds it instead


def compiled_features(system_info: str) -> list[str]:
    """The instruction sets llama.cpp says it was compiled with ("AVX2 = 1 | AMX_INT8 = 1 ..."),
    without its other build options (LLAMAFILE, OPENMP, REPACK)."""
    found = re.findall(r"([A-Z][A-Z0-9_]*) = 1", system_info)
    return [f for f in found if f not in _NOT_INSTRUCTIONS]


def signal_name(returncode: int) -> str:
    try:
        sig = signal.Signals(-returncode)
    except ValueError:
        return f"exit status {returncode}"
    return f"{sig.name} ({signal.strsignal(sig) or 'signal'})"


def cpu_summary(cpu_flags: list[str]) -> str:
    """The CPU's vector and matrix extensions, short enough to read in a message."""
    amx = sorted(f for f in cpu_flags if f.startswith("amx"))
    avx512 = [f for f in cpu_flags if f.startswith("avx512")]
    parts = [f"AMX ({', '.join(amx)})"] if amx else []
    if avx512:
        parts.append(f"AVX-512 ({len(avx512)} extensions)")
    parts += [name for flag, name in _NAMED_FLAGS if flag in cpu_flags]
    return ", ".join(parts) or "none of AVX2, AVX-512 or AMX"


def crash_message(returncode: int | None, compiled: list[str]) -> str:
    """Three lines: what happened, the features involved, the fix."""
    how = "hung and was stopped" if returncode is None else f"died on {signal_name(returncode)}"
    _, cpu_flags = cpu_description()
    built = ", ".join(compiled) or "unknown (it died while loading)"
    vm = (
        " A virtual machine can report AMX and still fault on it."
        if "amx_tile" in cpu_flags
        else ""
    )
    return (
        f"llama.cpp {how} while running the model in a check process: this llama-cpp-python "
        f"build does not run on this machine.\n"
        f"Compiled for: {built}. This CPU reports: {cpu_summary(cpu_flags)}.{vm}\n"
        f"Fix: run `{REBUILD_COMMAND}`, which recompiles it with portable flags, bypassing "
        f"pip's cache."
    )


def _text(data: bytes | str | None) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data or ""


def run_probe(model_path: Path, key: str, timeout: float = PROBE_TIMEOUT_S) -> BuildVerdict:
    """Run the model in a child process and judge the build (fingerprint `key`) by how that
    child ends."""
    cmd = [sys.executable, "-m", "engine.llama_build.probe", str(model_path)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        returncode: int | None = proc.returncode
        stdout, stderr = proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        returncode, stdout, stderr = None, _text(exc.stdout), _text(exc.stderr)
    lines = [json.loads(ln) for ln in stdout.splitlines() if ln.startswith("{")]
    info = next((ln["system_info"] for ln in lines if "system_info" in ln), "")
    compiled = compiled_features(info)
    if returncode == 0 and any(ln.get("ok") for ln in lines):
        return BuildVerdict(True, key, compiled=" ".join(compiled))
    error = next((ln["error"] for ln in lines if "error" in ln), None)
    if error is not None:  # the model, not the build: no verdict on the build
        raise MaskscopeError(f"the build check could not load the model: {error}")
    if returncode is not None and 0 < returncode < 128:  # Python failed, nothing crashed
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "no output")
        raise MaskscopeError(f"the build check could not run: {last.strip()}")
    return BuildVerdict(False, key, " ".join(compiled), returncode)


def ensure_build_runs(model_path: Path | None = None, use_cache: bool = True) -> BuildVerdict:
    """Raise BrokenBuildError unless the build has been seen running the model on this CPU."""
    key = fingerprint()
    verdict = cached_verdict(key) if use_cache else None
    if verdict is None:
        verdict = run_probe(model_path or default_model_path(), key)
        _store(verdict)
    if not verdict.ok:
        raise BrokenBuildError(verdict.message)
    return verdict
