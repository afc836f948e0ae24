"""--jsonl carries each token's exact text (`token_piece`, and `piece` for candidates) beside
its display form (`token_text`, `text`), so a real newline and a backslash-n differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.model.tokens import readable_piece

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


@pytest.mark.slow
def test_step_lines_hold_the_exact_text(capsys):
    person = ["--schema", str(EXAMPLES / "person.schema.json")]
    prompt = ["--prompt-file", str(EXAMPLES / "person.prompt.txt")]
    main(["generate", *person, *prompt, "--jsonl", "--temperature", "0"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    steps, result = lines[:-1], lines[-1]["result"]
    assert "".join(s["token_piece"] for s in steps) == result["text"]
    assert " " in result["text"]  # the output has spaces, which the display form shows as ␣
    for step in steps:
        by_id = {c["id"]: c for c in step["top"]}
        if step["token_id"] in by_id:
            assert by_id[step["token_id"]]["piece"] == step["token_piece"]
        for c in step["top"]:
            assert isinstance(c["piece"], str)
            if c["piece"] and "\ufffd" not in c["piece"]:  # a whole character, not an end token
                raw = c["piece"].encode()
                byte_token = "".join(f"<0x{b:02X}>" for b in raw)  # told apart from the same text
                assert c["text"] in (readable_piece(raw), byte_token)
