"""``commonplace mcp``: the command the core's command line takes from this package
(entry-point group ``commonplace.commands``)."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from typing import Any

from commonplace import Memory
from commonplace.errors import InvalidInputError

from ._server import build_server

DEFAULT_PORT = 8765
"""The port ``--transport http`` listens on when ``--port`` is not given."""

_LOOPBACK_NAMES = {"localhost"}


def add_command(subparsers: Any) -> None:
    """Add the ``mcp`` parser to the core command line's subparsers action."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve one user's memory to MCP clients (stdio or streamable HTTP)",
        description="A Model Context Protocol server over a commonplace store, for one user: "
        "tools remember, recall, forget and explain, and the resource commonplace://profile. "
        "Over HTTP it listens on 127.0.0.1 unless --host names another address and "
        "--allow-remote says so: the server has no authentication.",
    )
    parser.add_argument("--user", required=True, help="the user whose memory is served")
    parser.add_argument(
        "--user-name",
        action="append",
        default=[],
        dest="user_names",
        metavar="NAME",
        help="a name a user message may carry and still be the user's (repeat for more); a "
        "user message named as anyone else is kept as evidence only",
    )
    parser.add_argument("--url", help="store URL (default: $COMMONPLACE_URL or the data folder)")
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: for a client that starts the server) or http (streamable HTTP)",
    )
    parser.add_argument("--host", help="address to listen on with --transport http (127.0.0.1)")
    parser.add_argument(
        "--port", type=int, help=f"port to listen on with --transport http ({DEFAULT_PORT})"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --host be an address other machines can reach (no authentication!)",
    )
    parser.add_argument(
        "--trust-client-scope",
        action="store_true",
        help="let each call name another user (only for a client trusted with every user)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the client hangs up (stdio) or the process is interrupted (http)."""
    host, port = _address(args)
    with Memory(args.url) as memory:
        server = build_server(
            memory,
            user=args.user,
            trust_client_scope=args.trust_client_scope,
            user_names=args.user_names,
        )
        if args.transport == "stdio":
            server.run("stdio")
        else:
            # Ctrl-C or a process manager's SIGTERM is the way an HTTP server ends: uvicorn
            # stops serving and raises the signal again; both end here, and the store closes.
            previous = signal.signal(signal.SIGTERM, _interrupt)
            where = f"[{host}]" if ":" in host else host
            print(
                f"commonplace mcp: {args.user}'s memory at http://{where}:{port}/mcp "
                "(Ctrl-C stops it)",
                file=sys.stderr,
                flush=True,
            )
            try:
                server.run("streamable-http", host=host, port=port)
            except KeyboardInterrupt:
                pass
            finally:
                signal.signal(signal.SIGTERM, previous)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _address(args: argparse.Namespace) -> tuple[str, int]:
    if args.transport == "stdio":
        if args.host is not None or args.port is not None or args.allow_remote:
            raise InvalidInputError(
                "--host, --port and --allow-remote apply to --transport http only; "
                "leave them out for stdio"
            )
        return "", 0
    host = "127.0.0.1" if args.host is None else args.host
    port = DEFAULT_PORT if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise InvalidInputError(f"--port {port} is not a TCP port; give one from 1 to 65535")
    if not _is_loopback(host) and not args.allow_remote:
        raise InvalidInputError(
            f"--host {host} is not a loopback address: the server has no authentication, so "
            "anyone who can reach it could read and change this memory. Keep the default "
            "(127.0.0.1), or add --allow-remote if that is what you want."
        )
    return host, port


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything
