"""`make bench-cpu`: the forward pass of each candidate CPU build, side by side in one run.

Each candidate is a llama-cpp-python wheel from Maskscope's wheel cache (compiled first where
missing). A child process per candidate and round imports that wheel's llama_cpp (first on
PYTHONPATH), loads the default model and times single-token forward passes; rounds alternate
between candidates so that load on the machine falls on all of them alike. A candidate whose
child dies is reported with its signal, and llama.cpp's runtime CPU dispatch is scored too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from engine.llama_build.dispatch import chosen_variant, score_variants
from engine.llama_build.flags import CANDIDATES, PORTABLE, BuildFlags
from engine.llama_build.instructions import amx_instruction_count
from engine.llama_build.verdict import compiled_features, signal_name
from engine.llama_build.wheels import build_wheel, cached_wheel, wheel_dir

_PROMPT = "Extract the currency from this invoice: Total due 1,250.00 EUR by 3 March."


def unpacked(flags: BuildFlags) -> Path:
    """The candidate's wheel unpacked once, to be put first on a child's PYTHONPATH."""
    site = wheel_dir(flags) / "site"
    if not (site / "llama_cpp").is_dir():
        wheel = cached_wheel(flags) or build_wheel(flags)
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
    return site


def child(steps: int) -> int:
    import llama_cpp

    from engine.model.llama import Model

    model = Model.load()
    tokens = model.tokenize(_PROMPT)
    start = time.perf_counter()
    model.eval_prompt(tokens)
    prompt_ms = (time.perf_counter() - start) * 1e3
    forward = []
    for _ in range(steps):
        token = int(model.logits().argmax())
        start = time.perf_counter()
        model.eval_token(token)
        forward.append((time.perf_counter() - start) * 1e3)
    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    print(json.dumps({"prompt_ms": prompt_ms, "forward_ms": forward, "system_info": info}))
    return 0


def _run_child(site: Path, steps: int) -> dict:
    path = [str(site), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
    cmd = [sys.executable, "-m", "engine.llama_build.bench", "--child", str(steps)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        return {"returncode": proc.returncode}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(candidates: list[BuildFlags], rounds: int, steps: int) -> dict[str, dict]:
    sites = {c.name: unpacked(c) for c in candidates}
    results: dict[str, dict] = {c.name: {"forward_ms": [], "prompt_ms": []} for c in candidates}
    for _ in range(rounds):
        for c in candidates:
            res = results[c.name]
            if "returncode" in res:
                continue  # it crashed once: it will again
            out = _run_child(sites[c.name], steps)
            if "returncode" in out:
                res["returncode"] = out["returncode"]
                continue
            res["forward_ms"] += out["forward_ms"]
            res["prompt_ms"].append(out["prompt_ms"])
            res["system_info"] = out["system_info"]
    for c in candidates:
        lib = sites[c.name] / "llama_cpp" / "lib" / "libggml-cpu.so"
        results[c.name]["amx_instructions"] = amx_instruction_count(lib) if lib.exists() else None
    return results


def table(candidates: list[BuildFlags], results: dict[str, dict]) -> str:
    base = results[PORTABLE.name]["forward_ms"]
    base_p50 = statistics.median(base) if base else float("nan")
    rows = [
        "| build | compiled for | forward ms p50 | p90 | vs portable | prompt ms p50 | AMX "
        "instructions |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in candidates:
        r = results[c.name]
        if "returncode" in r or not r["forward_ms"]:
            how = f"died on {signal_name(r['returncode'])}" if "returncode" in r else "no data"
            rows.append(f"| {c.name} | | {how} | | | | {r['amx_instructions']} |")
            continue
        fwd = sorted(r["forward_ms"])
        p50, p90 = statistics.median(fwd), fwd[int(0.9 * (len(fwd) - 1))]
        feats = " ".join(compiled_features(r["system_info"]))
        rows.append(
            f"| {c.name} | {feats} | {p50:.2f} | {p90:.2f} | {p50 / base_p50:.2f}× | "
            f"{statistics.median(r['prompt_ms']):.1f} | {r['amx_instructions']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.llama_build.bench")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--only", nargs="*", choices=sorted(CANDIDATES), help="candidates to run")
    p.add_argument("--child", type=int, metavar="STEPS", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child is not None:
        return child(args.child)
    names = args.only or list(CANDIDATES)
    candidates = [CANDIDATES[n] for n in names if n != PORTABLE.name]
    candidates.insert(0, PORTABLE)
    results = measure(candidates, args.rounds, args.steps)
    print(
        f"{args.rounds} rounds × {args.steps} single-token forward passes, candidates alternating"
    )
    print(table(candidates, results))
    variant = chosen_variant(score_variants())
    amx = " (AMX)" if any(f.startswith("AMX") for f in variant.features) else ""
    print(
        f"\nRuntime dispatch (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS), scored by ggml's own "
        f"cpu-feats.cpp on this CPU: it would load the {variant.name} variant{amx}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
