"""Mask backends: which tokens the grammar allows next, over the full vocabulary."""

from engine.masking.base import MaskBackend, make_backend

__all__ = ["MaskBackend", "make_backend"]
