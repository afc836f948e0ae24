"""llama.cpp's own grammar parser as the judge of a GBNF text."""

from __future__ import annotations

import llama_cpp

from engine.errors import GrammarError
from engine.model import native_log

ROOT = "root"
# llama.cpp's grammar parser refuses a repeat it would expand into more rules than this.
_MAX_REPETITION = 2000


def check_gbnf(gbnf: str) -> None:
    """Parse the grammar with llama.cpp and raise GrammarError with its own message.

    llama.cpp prints the reason to stderr and returns NULL; the capture turns
    that into an exception the UI and CLI can show.
    """
    with native_log.capture() as captured:
        # No vocab is needed to parse a grammar without token literals.
        sampler = llama_cpp.llama_sampler_init_grammar(None, gbnf.encode(), ROOT.encode())
    if not sampler:
        detail = captured.errors or "llama.cpp rejected the grammar without saying why"
        if "exceeds sane defaults" in detail:
            raise GrammarError(
                "llama.cpp rejected the grammar: a bounded repeat (maxLength, maxItems, "
                f"…) is longer than llama.cpp's grammar engine takes (about {_MAX_REPETITION})",
                detail,
            )
        # The headline is llama.cpp's first error line already: given as `detail` to the
        # constructor, that line would be appended to the message a second time.
        error = GrammarError(f"llama.cpp rejected the grammar: {_headline(detail)}")
        error.detail = detail
        raise error
    llama_cpp.llama_sampler_free(sampler)


def _headline(detail: str) -> str:
    for line in detail.splitlines():
        if "error" in line.lower():
            return line.split("error parsing grammar:")[-1].strip()
    return detail.splitlines()[0].strip()
