from engine.model.tokens import readable_piece


def test_whitespace_and_control_bytes_are_visible():
    assert readable_piece(b" a") == "␣a"
    assert readable_piece(b"\n\t") == "\\n\\t"
    assert readable_piece(b"\x01") == "<0x01>"
    assert readable_piece(b"") == "∅"


def test_partial_utf8_shows_as_bytes():
    euro = "€".encode()
    assert readable_piece(euro) == "€"
    assert readable_piece(euro[:2]) == "<0xE2><0x82>"


def test_special_tokens_keep_their_text():
    assert readable_piece(b"<eos>", special=True) == "<eos>"
