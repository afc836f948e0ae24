"""Command-line options that pick and load a model, shared by `maskscope` and its bench."""

from __future__ import annotations

import argparse

from engine.settings import N_CTX, N_GPU_LAYERS, N_THREADS, ModelSettings


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="GGUF", help="a GGUF file (default: Gemma 3 270M)")
    defaults = ModelSettings()
    parser.add_argument(
        "--n-gpu-layers",
        type=N_GPU_LAYERS,
        default=defaults.n_gpu_layers,
        help="layers to offload to a GPU (-1: all)",
    )
    parser.add_argument(
        "--n-ctx", type=N_CTX, default=defaults.n_ctx, help="context size in tokens"
    )
    parser.add_argument("--threads", type=N_THREADS, default=None, help="CPU threads for llama.cpp")


def model_settings(args: argparse.Namespace) -> ModelSettings:
    return ModelSettings(
        path=args.model, n_gpu_layers=args.n_gpu_layers, n_ctx=args.n_ctx, n_threads=args.threads
    )
