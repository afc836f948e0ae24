"""The status bar keeps room for its message in a narrow window."""

from __future__ import annotations

from app.status import StatusBar
from engine.model.llama import ModelInfo

# A hand-made ModelInfo: the bar only reads its fields, and loading the model to get one
# would test llama.cpp, not the bar.
CPU = ModelInfo("/m/gemma.gguf", "gemma.gguf", 262144, 18, 0, False, True, 4096, 2)


def test_offload_is_short_in_the_bar_and_whole_on_hover(qtbot) -> None:
    bar = StatusBar()
    qtbot.addWidget(bar)
    bar.set_model(CPU)
    assert bar.gpu_label.text() == "CPU only"
    assert bar.gpu_label.toolTip() == CPU.offload_label != "CPU only"
