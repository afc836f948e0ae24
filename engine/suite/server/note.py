"""What a sample made on a server carries beside its output: the token logprobs the server
returned, how Maskscope's tested grammar reads the output, and whether the server failed open.
Kept apart from the server client so engine/suite/metrics.py can name it without HTTP."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerNote:
    tokens: tuple[str, ...] = ()  # the output's tokens as the server names them (with logprobs)
    logprobs: tuple[float, ...] = ()  # each token's logprob; empty when none came back
    grammar: str = ""  # the tested grammar on the output: "accepted", "rejected at ...", ...
    # Why the output shows the server ignored the schema or grammar; empty when it did not.
    failed_open: str = ""
    finish_reason: str = ""  # the server's own word: "stop", "length"
    # Times the request was sent again after its connection was refused (never after it may
    # have reached the server); 0 when the first try answered.
    retries: int = 0

    @property
    def mean_logprob(self) -> float | None:
        return sum(self.logprobs) / len(self.logprobs) if self.logprobs else None

    @property
    def min_logprob(self) -> float | None:
        return min(self.logprobs, default=None)
