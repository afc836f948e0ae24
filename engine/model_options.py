"""Command-line options that pick and load a model, shared by `maskscope` and its bench."""

from __future__ import annotations

import argparse

from engine.settings import ModelSettings


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="GGUF", help="a GGUF file (default: Gemma 3 270M)")
    parser.add_argument(
        "--n-gpu-layers", type=int, default=-1, help="layers to offload to a GPU (-1: all)"
    )
    parser.add_argument("--n-ctx", type=int, default=4096, help="context size in tokens")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for llama.cpp")


def model_settings(args: argparse.Namespace) -> ModelSettings:
    return ModelSettings(
        path=args.model, n_gpu_layers=args.n_gpu_layers, n_ctx=args.n_ctx, n_threads=args.threads
    )
