"""Errors, and retries with backoff on the failures a server recovers from by itself."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx

from commonplace.errors import StoreError

T = TypeVar("T")

# Words in a server's or a transport's message that mean "try again": a node restarting,
# a replica unreachable, a leader election, a timeout. Anything else is a real error.
_TRANSIENT = (
    "unavailable",
    "deadline exceeded",
    "deadline_exceeded",
    "connection refused",
    "connection reset",
    "broken pipe",
    "cannot reach enough replicas",
    "not enough replicas",
    "leader",
    "timeout",
    "timed out",
    "eof",
    "socket closed",
    "goaway",
    # a stream the peer reset (HTTP/2 RST_STREAM), as gRPC reports a node going away
    "rst_stream",
    # a coordinator's connection to a replica that just died, as a write's per-object error
    # ("rpc error: code = Canceled desc = grpc: the client connection is closing")
    "connection is closing",
    "too many requests",
    "temporarily",
    "try again",
    "503",
    "502",
    "504",
    "429",
    "no such host",
    "raft",
    "context canceled",
    "shutting down",
    "not ready",
    "connection error",
)


class WeaviateServerError(StoreError):
    """The local Weaviate server could not be built, started or stopped."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a call that failed transiently."""

    attempts: int = 5
    base_delay: float = 0.2
    max_delay: float = 5.0

    def delays(self) -> list[float]:
        return [
            min(self.max_delay, self.base_delay * 2**n) * (0.5 + random.random() / 2)
            for n in range(max(0, self.attempts - 1))
        ]


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth retrying (network trouble, a node down, overload)."""
    from weaviate.exceptions import (
        UnexpectedStatusCodeError,
        WeaviateClosedClientError,
        WeaviateConnectionError,
        WeaviateGRPCUnavailableError,
        WeaviateTimeoutError,
    )

    if isinstance(exc, WeaviateClosedClientError):
        return False
    if isinstance(
        exc,
        (
            WeaviateConnectionError,
            WeaviateGRPCUnavailableError,
            WeaviateTimeoutError,
            httpx.TransportError,
            ConnectionError,
            TimeoutError,
        ),
    ):
        return True
    if isinstance(exc, UnexpectedStatusCodeError):
        code = int(getattr(exc, "status_code", 0) or 0)
        if code in (408, 425, 429, 500, 502, 503, 504):
            return True
        if code in (400, 401, 403, 404):
            return False
    return _transient_text(str(exc))


def _transient_text(message: str) -> bool:
    lowered = message.lower()
    return any(word in lowered for word in _TRANSIENT)


def with_retries(call: Callable[[], T], *, policy: RetryPolicy, what: str, where: str) -> T:
    """Run ``call``, retrying transient failures with jittered exponential backoff.

    Only idempotent calls go through here: every write uses a deterministic or
    pre-generated object id, so sending it twice stores it once.
    """
    from weaviate.exceptions import WeaviateBaseError

    delays = policy.delays()
    for attempt in range(len(delays) + 1):
        try:
            return call()
        except StoreError:
            raise
        except (WeaviateBaseError, httpx.HTTPError, OSError) as exc:
            if not is_transient(exc):
                raise translate(exc, what=what, where=where) from exc
            if attempt == len(delays):
                raise StoreError(
                    f"Weaviate at {where} kept failing to {what} after {attempt + 1} tries "
                    f"({_short(exc)}); check that the server and its replicas are up, or raise "
                    "retries=/timeout= in the store URL"
                ) from exc
            time.sleep(delays[attempt])
    raise AssertionError("unreachable")  # pragma: no cover


def translate(exc: BaseException, *, what: str, where: str) -> StoreError:
    """A StoreError that says what failed, where, and how to fix it."""
    from weaviate.exceptions import (
        AuthenticationFailedError,
        InsufficientPermissionsError,
        UnexpectedStatusCodeError,
    )

    if isinstance(exc, AuthenticationFailedError) or (
        isinstance(exc, UnexpectedStatusCodeError) and exc.status_code == 401
    ):
        return StoreError(
            f"Weaviate at {where} refused the credentials while trying to {what}; pass the "
            "right API key (weaviate://:KEY@host or $WEAVIATE_API_KEY)"
        )
    if isinstance(exc, InsufficientPermissionsError) or (
        isinstance(exc, UnexpectedStatusCodeError) and exc.status_code == 403
    ):
        return StoreError(
            f"the API key has no permission to {what} on Weaviate at {where}; grant it "
            "read/write on the commonplace collections"
        )
    return StoreError(f"Weaviate at {where} failed to {what}: {_short(exc)}")


def _short(exc: BaseException, limit: int = 400) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
