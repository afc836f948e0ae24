from engine.model.tokens import (
    code_points,
    exact_piece,
    glyph_safe,
    likely_drawable,
    readable_piece,
)


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


def test_code_points_name_each_character():
    assert code_points("\u094d\u092d") == "U+094D U+092D"
    assert code_points("\U0001f600") == "U+1F600"  # five digits past the BMP, no padding lost


def test_a_text_with_an_undrawable_character_shows_its_code_points():
    def drawable(ch: str) -> bool:
        return ch.isascii()

    assert glyph_safe("\u094d\u092d", drawable) == "U+094D U+092D"
    assert glyph_safe("␣a", lambda ch: True) == "␣a"
    # Spaces and line breaks need no glyph: they never turn a token into code points.
    assert glyph_safe(" a\n", lambda ch: ch == "a") == " a\n"


def test_a_leading_combining_mark_gets_a_dotted_circle():
    assert glyph_safe("\u0301e", lambda ch: True) == "\u25cc\u0301e"
    assert glyph_safe("e\u0301", lambda ch: True) == "e\u0301"  # a mark on its own letter


def test_the_reports_rule_distrusts_private_use_unassigned_and_surrogates():
    assert [likely_drawable(ch) for ch in ("\ue000", "\U000e0080", "\ud800")] == [False] * 3
    # Scripts are left to the reader's browser and its fallback fonts.
    assert all(likely_drawable(ch) for ch in "a\u092d\u4e2d\u0301")


def test_code_points_are_the_tokens_own_not_its_display_forms():
    assert glyph_safe("␣\u092d", lambda ch: ch.isascii(), exact=" \u092d") == "U+0020 U+092D"
    assert exact_piece("␣\u092d", " \u092d") == " \u092d"
    assert exact_piece("\\n", "\n") == "\n"
    # The display spells bytes of a split character that the piece holds only as U+FFFD.
    assert exact_piece("<0xE0><0xA4>", "\ufffd") is None
    assert exact_piece("a", None) is None
