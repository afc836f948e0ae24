"""Tiny random-weight GGUF models: the adversary a grammar must survive. The builder lives in
engine/bench/tiny_model.py, since the bench's fast workload is one of them."""

from engine.bench.tiny_model import FAMILIES, tiny_model, vocab_file

__all__ = ["FAMILIES", "tiny_model", "vocab_file"]
