"""HTTP to an OpenAI-compatible server (llama-server, llama-cpp-python's server, vLLM), with
the standard library only: JSON in and out, a timeout per request, and retries with backoff
on what a retry can cure (a refused connection, a timeout, a dropped reply), never on an HTTP
error status, which the server meant.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.errors import SuiteError

RETRIES = 3  # attempts after the first
BACKOFF_S = 0.5  # before the first retry; doubled before each next one


class ServerUnreachable(SuiteError):
    """The server did not answer at all, after every retry; `reason` is the last attempt's
    ("Connection refused, 4 tries, timeout 120 s")."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class HttpRefusal(Exception):
    """The server answered with an HTTP error status; `message` is what its body says."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)
        self.status, self.message = status, message

    def __str__(self) -> str:
        return f"HTTP {self.status}: {self.message}"


@dataclass(frozen=True, slots=True)
class Reply:
    data: Any  # the parsed JSON body
    wall_ms: float  # of the attempt that answered


def _body_message(raw: bytes) -> str:
    """The error's message from an OpenAI-style {"error": {"message"}} body, else the body."""
    text = raw.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return text[:500]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:500]
    if isinstance(error, str):
        return error[:500]
    return text[:500]


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, urllib.error.HTTPError):
        return False
    return isinstance(
        exc,
        urllib.error.URLError | TimeoutError | socket.timeout | ConnectionError
        | http.client.HTTPException,
    )  # fmt: skip


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        exc = exc.reason if isinstance(exc.reason, BaseException) else exc
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


class ServerClient:
    """One server's base URL (http://host:port, with or without /v1)."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 120.0,
        retries: int = RETRIES,
        backoff_s: float = BACKOFF_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        base = url.rstrip("/")
        self.url = url
        self.base = base[: -len("/v1")] if base.endswith("/v1") else base
        self.timeout_s, self.retries, self.backoff_s, self._sleep = (
            timeout_s, retries, backoff_s, sleep,
        )  # fmt: skip

    def get(self, path: str) -> Reply:
        return self._send(urllib.request.Request(self.base + path, method="GET"))

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        return self._send(urllib.request.Request(self.base + path, data, headers, method="POST"))

    def _send(self, request: urllib.request.Request) -> Reply:
        """The reply's JSON; HttpRefusal for an error status; ServerUnreachable once every
        retry failed to get an answer."""
        wait = self.backoff_s
        for attempt in range(self.retries + 1):
            t0 = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    raw = response.read()
                wall_ms = (time.perf_counter() - t0) * 1000.0
            except urllib.error.HTTPError as exc:
                raise HttpRefusal(exc.code, _body_message(exc.read())) from None
            except Exception as exc:
                if not _retryable(exc):
                    raise
                if attempt == self.retries:
                    tries = f"{self.retries + 1} tries" if self.retries else "1 try"
                    reason = f"{_reason(exc)}, {tries}, timeout {self.timeout_s:g} s"
                    raise ServerUnreachable(
                        f"cannot reach the server at {self.url} ({reason}): is it running, "
                        "and is the URL right?",
                        reason,
                    ) from None
                self._sleep(wait)
                wait *= 2
                continue
            try:
                return Reply(json.loads(raw), wall_ms)
            except json.JSONDecodeError:
                raise HttpRefusal(200, f"not JSON: {raw[:200]!r}") from None
        raise AssertionError("the last attempt returns or raises")
