"""The model named on screen is the one the Model field asks for (issue 27, item 7): the
status bar named Gemma while the field held another file, and the model's error banner
stayed until the next Run after the field was put right."""

from __future__ import annotations

LOAD_TIMEOUT_MS = 60_000


def test_a_bad_model_file_is_named_and_its_banner_goes_when_the_field_is_put_right(
    qtbot, window, tmp_path
):
    qtbot.waitUntil(lambda: window.model_info is not None, timeout=LOAD_TIMEOUT_MS)
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    window.settings_panel.set_model_path(str(bad))
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=LOAD_TIMEOUT_MS)
    label = window.status.model_label.text()
    assert "broken.gguf" in label and "not loaded" in label
    window.settings_panel.set_model_path("")  # back to the default model
    qtbot.waitUntil(lambda: not window.banner.isVisible(), timeout=LOAD_TIMEOUT_MS)
    qtbot.waitUntil(
        lambda: window.status.model_label.text().startswith("model: gemma"),
        timeout=LOAD_TIMEOUT_MS,
    )
