"""HTTP to an OpenAI-compatible server (llama-server, llama-cpp-python's server, vLLM), with
the standard library only: JSON in and out, under four rules.

- A deadline for the whole request (connect, send, headers and body together), not per
  socket read: a server that drips its reply a byte at a time is stopped at the deadline.
- A limit on the body's size: a reply beyond it is refused, never read into memory whole.
- Retries only where a request is safe to repeat: any request whose connection was refused
  (nothing was sent), and a GET whose connection dropped. A POST that may have reached the
  server (a timeout, a dropped reply) is never sent again: the server may be decoding it
  still, and a second copy would double its load and count twice. An HTTP error status is
  the server's answer and is never retried. Each reply says how many retries it took.
- TLS is verified (the default SSL context), and a certificate that fails verification is a
  one-line error saying so, never retried.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.errors import SuiteError
from engine.files import not_utf8
from engine.schema.nesting import TooDeepError, check_depth, too_deep

RETRIES = 3  # attempts after the first, where a retry is safe
BACKOFF_S = 0.5  # before the first retry; doubled before each next one
MAX_BODY_BYTES = 64 << 20  # a completion with logprobs is far below; a runaway body is not
_CHUNK = 1 << 16


class ServerUnreachable(SuiteError):
    """The server did not answer at all, after every retry that was safe; `reason` is the
    last attempt's ("Connection refused, 4 tries, timeout 120 s")."""

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
    retries: int = 0  # attempts before the one that answered


class _NotSent(Exception):
    """The connection failed before any byte of the request went out: safe to retry."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause)
        self.cause = cause


class _Dropped(Exception):
    """The request went out and no whole reply came back (a timeout, a closed connection)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _body_message(raw: bytes) -> str:
    """The error's message from an OpenAI-style {"error": {"message"}} body, else the body."""
    text = raw.decode("utf-8", "replace").strip()
    if too_deep(text) is not None:  # json's parser recurses: the body is shown as it is
        return text[:500]
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


def parse_reply(raw: bytes, status: int, where: str) -> Any:
    """The JSON value of a reply's body: HttpRefusal for a body that is not JSON (the sample
    errs, as for an error status), a SuiteError for one nested too deep to parse safely."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HttpRefusal(status, f"not JSON: {not_utf8(exc)}") from None
    try:
        check_depth(text, f"the reply of {where}")
    except TooDeepError as exc:  # bad input, as a deep file is: exit 2 with its place
        raise SuiteError(exc.message) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise HttpRefusal(status, f"not JSON: {raw[:200]!r}") from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


class ServerClient:
    """One server's base URL (http(s)://host:port, with or without /v1)."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 120.0,
        retries: int = RETRIES,
        backoff_s: float = BACKOFF_S,
        max_body_bytes: int = MAX_BODY_BYTES,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        base = url.rstrip("/")
        self.url = url
        self.base = base[: -len("/v1")] if base.endswith("/v1") else base
        parts = urllib.parse.urlsplit(self.base)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SuiteError(f"the server URL must be http:// or https://host[:port]: {url}")
        self._parts = parts
        self.timeout_s, self.retries, self.backoff_s, self._sleep = (
            timeout_s, retries, backoff_s, sleep,
        )  # fmt: skip
        self.max_body_bytes = max_body_bytes
        # Verification on: the default context checks the chain and the host name.
        self._ssl = ssl_context or ssl.create_default_context()

    def get(self, path: str) -> Reply:
        return self._send("GET", path, None, {})

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        data = json.dumps(body).encode()
        return self._send("POST", path, data, {"Content-Type": "application/json"})

    def _send(self, method: str, path: str, data: bytes | None, headers: dict) -> Reply:
        """The reply's JSON; HttpRefusal for an error status; ServerUnreachable once no
        answer came and no retry is safe (or every safe retry was spent)."""
        wait = self.backoff_s
        for attempt in range(self.retries + 1):
            t0 = time.perf_counter()
            try:
                status, raw = self._attempt(method, path, data, headers)
            except (_NotSent, _Dropped) as exc:
                # A GET asks again after a drop; a POST only when nothing went out.
                safe = isinstance(exc, _NotSent) or method == "GET"
                if not safe or attempt == self.retries:
                    raise self._unreachable(exc, attempt + 1) from None
                self._sleep(wait)
                wait *= 2
                continue
            wall_ms = (time.perf_counter() - t0) * 1000.0
            if status >= 400:
                raise HttpRefusal(status, _body_message(raw))
            return Reply(parse_reply(raw, status, f"{self.url}{path}"), wall_ms, attempt)
        raise AssertionError("the last attempt returns or raises")

    def _unreachable(self, exc: _NotSent | _Dropped, tries: int) -> ServerUnreachable:
        why = _reason(exc.cause) if isinstance(exc, _NotSent) else exc.reason
        counted = f"{tries} tries" if tries > 1 else "1 try"
        reason = f"{why}, {counted}, timeout {self.timeout_s:g} s"
        if isinstance(exc, _Dropped):
            return ServerUnreachable(
                f"no answer from the server at {self.url} ({reason}); a request that may "
                "have reached the server is not sent again",
                reason,
            )
        return ServerUnreachable(
            f"cannot reach the server at {self.url} ({reason}): is it running, and is the "
            "URL right?",
            reason,
        )

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        host, port = self._parts.hostname, self._parts.port
        if self._parts.scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout_s, context=self._ssl)
        return http.client.HTTPConnection(host, port, timeout=timeout_s)

    def _attempt(
        self, method: str, path: str, data: bytes | None, headers: dict
    ) -> tuple[int, bytes]:
        """One request under one deadline: (status, body). _NotSent when the connection
        failed, _Dropped when the request went out and no whole reply came back."""
        deadline = time.monotonic() + self.timeout_s
        conn = self._connection(self.timeout_s)
        try:
            try:
                conn.connect()
            except ssl.SSLCertVerificationError as exc:
                raise SuiteError(
                    f"the server at {self.url} failed TLS certificate verification "
                    f"({exc.verify_message or exc.reason}): its certificate is not trusted "
                    "here (self-signed, expired, or for another host name)"
                ) from None
            except TimeoutError:
                raise _Dropped("timed out while connecting") from None
            except OSError as exc:
                raise _NotSent(exc) from None
            # The deadline covers the whole exchange: at its end the socket is shut, which
            # ends whatever read is waiting, however slowly the server drips. The socket is
            # taken now: http.client hands it to the response (conn.sock None) when the
            # server says it will close the connection after the reply.
            expired = threading.Event()
            watchdog = threading.Timer(
                max(0.0, deadline - time.monotonic()), _expire, (conn.sock, expired)
            )
            watchdog.daemon = True
            watchdog.start()
            try:
                return self._exchange(conn, method, path, data, headers, deadline)
            except (OSError, http.client.HTTPException) as exc:
                timed_out = expired.is_set() or isinstance(exc, TimeoutError)
                raise _Dropped("timed out" if timed_out else _reason(exc)) from None
            finally:
                watchdog.cancel()
        finally:
            conn.close()

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        method: str,
        path: str,
        data: bytes | None,
        headers: dict,
        deadline: float,
    ) -> tuple[int, bytes]:
        target = (self._parts.path or "") + path
        conn.request(method, target, body=data, headers=headers)
        response = conn.getresponse()
        declared = response.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise self._too_big(f"{int(declared):,} bytes declared")
        chunks: list[bytes] = []
        size = 0
        while chunk := response.read(_CHUNK):
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_big(f"over {size:,} bytes and still sending")
            chunks.append(chunk)
        # http.client returns what came rather than raise when the body is cut short (by
        # the deadline's shutdown, or by the server): a partial body is no reply.
        if time.monotonic() > deadline:
            raise TimeoutError("past the deadline")
        if response.length:
            raise http.client.IncompleteRead(b"".join(chunks), response.length)
        return response.status, b"".join(chunks)

    def _too_big(self, how: str) -> SuiteError:
        return SuiteError(
            f"the server at {self.url} sent a reply too large to read ({how}; the limit is "
            f"{self.max_body_bytes:,} bytes)"
        )


def _expire(sock: socket.socket | None, expired: threading.Event) -> None:
    expired.set()
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed: nothing is waiting on it
            sock.shutdown(socket.SHUT_RDWR)
