"""`maskscope setup`: the default model in place, and the llama.cpp build proven to run here."""

from __future__ import annotations

import argparse

from engine.llama_build.verdict import ensure_build_runs


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "setup", help="put the default model in place and prove the llama.cpp build runs here"
    )
    p.add_argument(
        "--recheck", action="store_true", help="run the build check again, ignoring its verdict"
    )
    p.set_defaults(func=cmd_setup)


def cmd_setup(args: argparse.Namespace) -> int:
    from engine.llama_build.verdict import installed_flags
    from engine.model.paths import DEFAULT_MODEL_LABEL, default_model_path

    path = default_model_path(verify=True)
    print(f"default model: {DEFAULT_MODEL_LABEL} at {path}")
    flags = installed_flags()
    origin = flags.name if flags else "not installed by Maskscope: its flags are unknown"
    verdict = ensure_build_runs(path, use_cache=not args.recheck)
    compiled = verdict.compiled or "no listed CPU features"
    print(f"llama.cpp build ({origin}): ran the model in a check process; compiled for {compiled}")
    from engine.model.llama import gpu_offload_supported  # only once the build is proven

    gpu = "yes" if gpu_offload_supported() else "no (CPU build)"
    print(f"GPU offload in this build: {gpu}")
    return 0
