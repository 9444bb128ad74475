"""Store URLs: ``weaviate://[:API_KEY@]host[:http_port][?option=value&...]``.

``weaviates://`` is the same over TLS (HTTPS and secure gRPC, default port 443).
The API key may also come from ``$WEAVIATE_API_KEY``; it is never shown again
(``Settings.url`` leaves it out).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from commonplace.errors import InvalidURLError

SCHEMES = ("weaviate", "weaviates")
_PREFIX = re.compile(r"[A-Z][A-Za-z0-9]{0,39}")
_CONSISTENCY = ("one", "quorum", "all")
_OPTIONS = {
    "grpc_port": "gRPC port (default 50051, or 443 with weaviates://)",
    "grpc_host": "gRPC host (default: the URL's host; grpc-<host> with weaviates://)",
    "prefix": "collection name prefix (default Commonplace)",
    "timeout": "seconds to wait for a query or a write (default 30)",
    "connect_timeout": "seconds to wait for the server at startup (default 10)",
    "retries": "tries for a call that fails transiently (default 5)",
    "consistency": "replica consistency: one, quorum or all (default: the server's)",
    "replication": "replication factor of new collections (default 1)",
    "workers": "parallel requests for multi-tenant queries (default 8)",
}


@dataclass(frozen=True, slots=True)
class Settings:
    """How to reach a Weaviate server and lay out the store in it."""

    host: str
    http_port: int = 8080
    grpc_port: int = 50051
    grpc_host: str | None = None
    secure: bool = False
    api_key: str | None = field(default=None, repr=False)
    prefix: str = "Commonplace"
    timeout: float = 30.0
    connect_timeout: float = 10.0
    retries: int = 5
    consistency: str | None = None
    replication: int = 1
    workers: int = 8

    def __post_init__(self) -> None:
        if not self.host:
            raise InvalidURLError("the Weaviate URL has no host; write weaviate://host:8080")
        for name in ("http_port", "grpc_port"):
            port = getattr(self, name)
            if not 0 < port < 65536:
                raise InvalidURLError(f"{name}={port} is not a TCP port (1-65535)")
        if not _PREFIX.fullmatch(self.prefix):
            raise InvalidURLError(
                f"prefix={self.prefix!r} is not usable in Weaviate collection names; use a "
                "capitalised ASCII word of up to 40 letters or digits, e.g. prefix=Memory"
            )
        if self.grpc_port == self.http_port and (self.grpc_host or self.host) == self.host:
            raise InvalidURLError(
                f"the HTTP and gRPC ports are both {self.http_port}; Weaviate serves gRPC on its "
                "own port (GRPC_PORT, 50051 by default): set ?grpc_port="
            )
        if self.consistency is not None and self.consistency not in _CONSISTENCY:
            raise InvalidURLError(
                f"consistency={self.consistency!r}; use one of {', '.join(_CONSISTENCY)}"
            )
        if self.timeout <= 0 or self.connect_timeout <= 0:
            raise InvalidURLError("timeout and connect_timeout must be positive seconds")
        if not 1 <= self.retries <= 50 or not 1 <= self.replication <= 15:
            raise InvalidURLError("retries must be in [1, 50] and replication in [1, 15]")
        if not 1 <= self.workers <= 64:
            raise InvalidURLError("workers must be in [1, 64]")

    @property
    def scheme(self) -> str:
        return "weaviates" if self.secure else "weaviate"

    @property
    def where(self) -> str:
        """Where the server is, for messages: ``http://host:port (gRPC host:port)``."""
        http = "https" if self.secure else "http"
        return (
            f"{http}://{self.host}:{self.http_port} "
            f"(gRPC {self.grpc_host or self.host}:{self.grpc_port})"
        )

    @property
    def url(self) -> str:
        """The store URL again, with every non-default option and never the API key."""
        defaults = Settings(
            host=self.host,
            secure=self.secure,
            http_port=self.http_port,
            grpc_port=_default_grpc(self.secure),
            grpc_host=f"grpc-{self.host}" if self.secure else None,
        )
        query = {}
        for name in _OPTIONS:
            value = getattr(self, name)
            if value != getattr(defaults, name):
                query[name] = str(value)
        host = f"[{self.host}]" if ":" in self.host else self.host
        tail = "?" + urllib.parse.urlencode(query) if query else ""
        return f"{self.scheme}://{host}:{self.http_port}{tail}"

    def with_prefix(self, prefix: str) -> Settings:
        return replace(self, prefix=prefix)


def _default_grpc(secure: bool) -> int:
    return 443 if secure else 50051


def parse_url(url: str, *, environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from a ``weaviate://`` URL; raises InvalidURLError saying how to fix it."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURLError(
            f"cannot read the Weaviate URL: {exc}; write weaviate://host:8080?grpc_port=50051"
        ) from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise InvalidURLError(f"{scheme}:// is not a Weaviate URL; use weaviate:// or weaviates://")
    if parts.path not in ("", "/") or parts.fragment:
        raise InvalidURLError(
            "a Weaviate URL has no path: weaviate://host:8080?prefix=Name selects a store"
        )
    secure = scheme == "weaviates"
    options: dict[str, str] = {}
    for key, values in urllib.parse.parse_qs(
        parts.query, keep_blank_values=True, strict_parsing=False
    ).items():
        if key not in _OPTIONS:
            known = "; ".join(f"{k}: {v}" for k, v in _OPTIONS.items())
            raise InvalidURLError(f"unknown option {key!r} in the Weaviate URL; known: {known}")
        if len(values) != 1:
            raise InvalidURLError(f"option {key!r} is given {len(values)} times; give it once")
        options[key] = values[0]
    env = environ if environ is not None else {}
    api_key = urllib.parse.unquote(parts.password) if parts.password else None
    api_key = api_key or env.get("WEAVIATE_API_KEY") or None
    return Settings(
        host=parts.hostname or "",
        http_port=port or (443 if secure else 8080),
        grpc_port=_int(options, "grpc_port", _default_grpc(secure)),
        # TLS deployments (Weaviate Cloud among them) serve gRPC on 443 at "grpc-<host>"
        grpc_host=options.get("grpc_host") or (f"grpc-{parts.hostname}" if secure else None),
        secure=secure,
        api_key=api_key,
        prefix=options.get("prefix", "Commonplace"),
        timeout=_float(options, "timeout", 30.0),
        connect_timeout=_float(options, "connect_timeout", 10.0),
        retries=_int(options, "retries", 5),
        consistency=options.get("consistency", "").lower() or None,
        replication=_int(options, "replication", 1),
        workers=_int(options, "workers", 8),
    )


def _int(options: Mapping[str, str], name: str, default: int) -> int:
    if name not in options:
        return default
    try:
        return int(options[name])
    except ValueError:
        raise InvalidURLError(f"{name}={options[name]!r} is not a whole number") from None


def _float(options: Mapping[str, str], name: str, default: float) -> float:
    if name not in options:
        return default
    try:
        return float(options[name])
    except ValueError:
        raise InvalidURLError(f"{name}={options[name]!r} is not a number of seconds") from None
