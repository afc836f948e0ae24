"""Long-lived objects kept out of Python's full garbage collections.

A loaded model brings a heap of objects that live as long as it does (the tokenizer's
tables, the grammar engine's vocabulary, the window's own). Every full collection walked
them all, about 110 ms with the default model, and one fell early in each run: the window
froze for that long at an early step (the bench's GUI-lag probe: 90-150 ms, against 20 ms
once they are frozen). So after each model load, while the window says it is loading,
everything still alive moves into the generation that collections skip (gc.freeze).
"""

from __future__ import annotations

import gc
import weakref

_settled: weakref.WeakSet[object] = weakref.WeakSet()  # models settle() has run after


def settle() -> None:
    """One full collection of everything, the frozen included (so that what died since the
    last load is freed), then what is left frozen."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def settle_after_load(model: object) -> None:
    """settle() once per loaded model: a model already settled costs nothing."""
    if model not in _settled:
        settle()
        _settled.add(model)
