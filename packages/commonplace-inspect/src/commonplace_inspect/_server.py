"""The page served on loopback: a small ``http.server`` that reads the store afresh for
each request and answers nothing but the page.

Bound to a loopback address unless ``allow_remote`` is given; on loopback it also checks
the Host header, so a page elsewhere cannot reach it through a DNS name that resolves to
127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import dataclasses
import ipaddress
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from commonplace import Memory
from commonplace.errors import InvalidInputError

from ._assets import content_security_policy
from ._collect import collect
from ._render import render_page

_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only: ``localhost`` or a loopback address."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class InspectorServer(HTTPServer):
    """Serves :func:`commonplace_inspect.render_page` for one user of an open Memory.

    Requests are answered one at a time in the thread that calls ``serve_forever``, the
    thread the Memory was opened in."""

    def __init__(
        self,
        memory: Memory,
        *,
        user: str,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
        query: str | None = None,
    ) -> None:
        if not is_loopback(host) and not allow_remote:
            raise InvalidInputError(
                f"--host {host!r} is not a loopback address: the page shows everything the "
                "agent remembers about a user; add --allow-remote to serve it beyond this "
                "machine on purpose"
            )
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise InvalidInputError(f"--port {port!r} is not a TCP port (0 picks a free one)")
        self.memory = memory
        self.user = user
        self.allow_remote = allow_remote
        # the probe recall runs once, here: reloading the page must not log a recall each time
        first = collect(memory, user=user, probe=query)
        self.probe = first.probe
        try:
            super().__init__((host, port), _Handler)
        except OSError as exc:
            raise InvalidInputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"

    def page(self) -> bytes:
        inspection = collect(self.memory, user=self.user)
        inspection = dataclasses.replace(inspection, probe=self.probe)
        return render_page(inspection).encode("utf-8")

    def allowed_host(self, header: str | None) -> bool:
        if self.allow_remote:
            return True
        if header is None:
            return False
        port = self.server_address[1]
        name, _, given = header.rpartition(":")
        return given == str(port) and is_loopback(name)


class _Handler(BaseHTTPRequestHandler):
    server: InspectorServer
    server_version = "commonplace-inspect"
    sys_version = ""

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def _answer(self, *, with_body: bool) -> None:
        if not self.server.allowed_host(self.headers.get("Host")):
            self._plain(421, "this page answers only to its loopback address\n", with_body)
            return
        if self.path.split("?", 1)[0] != "/":
            self._plain(404, "not found: the inspector serves one page, /\n", with_body)
            return
        body = self.server.page()
        self.send_response(200)
        for name, value in _HEADERS.items():
            self.send_header(name, value)
        self.send_header("Content-Security-Policy", content_security_policy())
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def _plain(self, status: int, text: str, with_body: bool) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Security-Policy", "default-src 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the command prints its address once; a line per request is noise
