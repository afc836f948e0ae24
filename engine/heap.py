"""Long-lived objects kept out of Python's full garbage collections.

A loaded model brings a heap of objects that live as long as it does (the tokenizer's
tables, the grammar engine's vocabulary, the window's own modules): about 220,000, and
every full collection walked them all, about 100 ms holding the GIL, so the window froze
that long whenever one came (the bench's GUI-lag probe read 90-150 ms). After a model load
everything still alive moves into the generation that collections skip (gc.freeze): a full
collection then takes under 1 ms. The window calls this on its GUI thread, between jobs
(app/decoding/worker.py): the collection may free Qt objects, which no other thread may.
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
