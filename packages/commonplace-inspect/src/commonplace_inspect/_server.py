"""The page served on loopback: a small ``http.server`` that reads the store afresh for
each request and answers the page of any user the store holds (``/?user=NAME``) and,
on loopback only, the forget form (``POST /forget``).

Bound to a loopback address unless ``allow_remote`` is given; on loopback it also checks
the Host header, so a page elsewhere cannot reach it through a DNS name that resolves to
127.0.0.1 (DNS rebinding). Erasing takes a POST carrying the server's random token (a
page of another origin cannot read it), from the page's own origin, asked and then
confirmed; a server reachable from other machines offers no erasing at all.
"""

from __future__ import annotations

import dataclasses
import hmac
import ipaddress
import secrets
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from commonplace import Memory, Scope
from commonplace.errors import InvalidInputError

from ._assets import content_security_policy
from ._collect import collect, users
from ._forms import Served, confirm_page, problem_page
from ._render import render_page

_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: under no-referrer a browser posts a form with
    # "Origin: null", and the forget form's origin could not be told from a foreign one
    "Referrer-Policy": "same-origin",
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
        # the forms' token: random per server, never in a URL, compared in constant time
        self.token = secrets.token_urlsafe(32)
        self.notices: dict[str, str] = {}
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

    @property
    def forgetting(self) -> bool:
        """Whether the page offers erasing: only where no other machine can reach it."""
        return not self.allow_remote

    def served(self, notice: str | None = None) -> Served:
        # the user it was started for is offered even with nothing derived yet
        known = tuple(sorted({*users(self.memory), self.user}))
        return Served(known, self.token if self.forgetting else None, notice)

    def page(self, user: str | None = None, *, notice: str | None = None) -> tuple[int, str]:
        """The page of ``user`` (default: the one given at start), or a page saying
        the store holds no such user; with its HTTP status."""
        user = self.user if user is None else user
        served = self.served(notice)
        if user not in served.users:
            return 404, problem_page(_unknown(user, served), served=served, user=self.user)
        inspection = collect(self.memory, user=user)
        if user == self.user:
            inspection = dataclasses.replace(inspection, probe=self.probe)
        return 200, render_page(inspection, served=served)

    def forget(self, form: Mapping[str, str]) -> tuple[int, str, str | None]:
        """Answer a valid forget form: the question (no ``confirm=yes``), or erase and
        name the page to go back to. Returns the status, the page and where to go."""
        user = form.get("user", "")
        served = self.served()
        if user not in served.users:
            return 404, problem_page(_unknown(user, served), served=served, user=self.user), None
        scope = Scope(user=user)
        record_id = form.get("record")
        if record_id is None and form.get("all") != "yes":
            message = "say what to erase: a record (record=ID) or everything (all=yes)"
            return 400, problem_page(message, served=served, user=user), None
        if record_id is None:
            what = f"everything remembered about {user}"
        else:
            inspection = collect(self.memory, user=user)
            shown = inspection.record(record_id) or inspection.episodes.get(record_id)
            if shown is None:
                message = (
                    f"{user} has no note or turn {record_id!r} (erased already?); "
                    "reload the page to see what remains"
                )
                return 404, problem_page(message, served=served, user=user), None
            what = f"“{_short(shown.text)}”"
        if form.get("confirm") != "yes":
            return (
                200,
                confirm_page(token=self.token, user=user, record_id=record_id, what=what),
                None,
            )
        if record_id is None:
            counts = self.memory.forget_scope(scope)
            done = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "nothing"
            told = f"Erased {what}: {done}."
        else:
            # the same forget as the command line's: cards that held its words are rewritten
            report = self.memory.forget(record_id, scope=scope, include_evidence=True)
            told = (
                f"Erased {what}: {_many(len(report.records), 'record')} and "
                f"{_many(len(report.episodes), 'turn')} (what was written from it and the "
                "turns it was written from); the profile card was rewritten without it."
            )
        # the probe recall read what was just erased: it no longer describes the store
        self.probe = None
        key = secrets.token_urlsafe(8)
        self.notices = {**dict(list(self.notices.items())[-19:]), key: told}
        # back to the page erased from; after erasing a user, to the first page's user
        back = self.user if record_id is None and user != self.user else user
        return 303, "", f"/?user={quote(back, safe='')}&notice={key}"

    def form_token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def allowed_host(self, header: str | None) -> bool:
        if self.allow_remote:
            return True
        if header is None:
            return False
        port = self.server_address[1]
        name, _, given = header.rpartition(":")
        return given == str(port) and is_loopback(name)


def _unknown(user: str, served: Served) -> str:
    named = ", ".join(served.users) or "none yet"
    return (
        f"This store holds nothing about a user {user!r}. Its users: {named}. "
        "Pick one below, or start with --user NAME."
    )


def _many(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# a forget form is a few short fields: a longer body is not one
_MAX_FORM = 16_384


class _Handler(BaseHTTPRequestHandler):
    server: InspectorServer
    server_version = "commonplace-inspect"
    sys_version = ""
    # one request at a time: a client that opens a form and sends nothing must not hold
    # the page for everyone else
    timeout = 30

    def do_GET(self) -> None:
        self._answer(with_body=True)

    def do_HEAD(self) -> None:
        self._answer(with_body=False)

    def _answer(self, *, with_body: bool) -> None:
        if not self.server.allowed_host(self.headers.get("Host")):
            self._plain(421, "this page answers only to its loopback address\n", with_body)
            return
        parts = urlsplit(self.path)
        if parts.path != "/":
            self._plain(404, "not found: the inspector serves one page, /\n", with_body)
            return
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        notice = self.server.notices.get(query.get("notice", ""))
        status, page = self.server.page(query.get("user"), notice=notice)
        self._html(status, page, with_body=with_body)

    def do_POST(self) -> None:
        refused = self._refusal()
        if refused is not None:
            self._plain(refused[0], refused[1] + "\n", True)
            return
        length = int(self.headers.get("Content-Length") or 0)
        sent = self.rfile.read(length).decode("utf-8", "replace")  # bad bytes: no token
        form = {k: v[-1] for k, v in parse_qs(sent).items()}
        if not self.server.form_token_ok(form.get("token")):
            self._plain(
                403, "refused: the form's token is missing or wrong; reload the page\n", True
            )
            return
        status, page, location = self.server.forget(form)
        if location is not None:
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._html(status, page, with_body=True)

    def _refusal(self) -> tuple[int, str] | None:
        """Why a POST is refused before its body is read, or ``None``."""
        host = self.headers.get("Host")
        if not self.server.allowed_host(host):
            return 421, "this page answers only to its loopback address"
        if not self.server.forgetting:
            return 403, "refused: a server started with --allow-remote erases nothing"
        if urlsplit(self.path).path != "/forget":
            return 404, "not found: the inspector takes one form, /forget"
        origin = self.headers.get("Origin")
        # a browser names the page a form was sent from: only the inspector's own
        if origin is not None and origin != f"http://{host}":
            return 403, f"refused: a form from {origin} cannot erase anything here"
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return 400, "refused: Content-Length is not a number"
        if not 0 < length <= _MAX_FORM:
            return 413, "refused: a forget form is a few short fields"
        return None

    def _html(self, status: int, page: str, *, with_body: bool) -> None:
        body = page.encode("utf-8")
        self.send_response(status)
        for name, value in _HEADERS.items():
            self.send_header(name, value)
        policy = content_security_policy(forms=self.server.forgetting)
        self.send_header("Content-Security-Policy", policy)
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
