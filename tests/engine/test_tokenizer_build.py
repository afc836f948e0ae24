"""llguidance's vocabulary, built by Maskscope so that a closing window can stop the build."""

from __future__ import annotations

import pytest

from engine.masking import llguidance as backend
from engine.model.llama import LoadCancelled


def test_a_stop_ends_the_build_within_one_slice_of_the_vocabulary(model) -> None:
    looks: list[int] = []

    def stop_on_the_third_look() -> bool:
        looks.append(1)
        return len(looks) == 3

    with pytest.raises(LoadCancelled, match="the load was stopped"):
        backend._build_tokenizer(model, stop_on_the_third_look)
    assert len(looks) == 3  # 2 slices of 8,192 tokens read, of 262,144


def test_special_tokens_are_marked_as_llguidance_marks_them(model) -> None:
    tok = backend.tokenizer_for(model)
    eos = int(model.eog_ids[0])
    assert tok.is_special_token(eos)
    assert not tok.is_special_token(model.tokenize("{", add_special=False)[0])
    assert backend._marked(b"<mask>", 0) == b"<mask>"  # attributes say nothing: plain text
