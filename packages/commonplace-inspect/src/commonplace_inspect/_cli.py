"""``commonplace inspect``: added to the core's command line through the entry-point
group ``commonplace.commands``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from commonplace import Memory

from ._collect import collect
from ._render import render_page
from ._server import InspectorServer


def add_command(sub: Any) -> None:
    """Add ``inspect`` to the subparsers action of ``commonplace``'s parser."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "inspect",
        help="a local web page of what the agent remembers about each user",
        description="Serve, on loopback, a page of what the store remembers about a "
        "user: the profile card, notes by tier with their evidence, supersession chains, "
        "recalls, the lifecycle's audit log and disagreement flags. The page switches "
        "between the store's users and, on loopback, erases a note, a turn or everything "
        "about a user (asking first). With --out, write one user's page to a file instead.",
    )
    parser.add_argument(
        "--user", required=True, help="the user whose page opens first (the page lists the rest)"
    )
    parser.add_argument("--url", help="store URL (default: $COMMONPLACE_URL or the data folder)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=0, help="port to listen on (default: a free one, printed)"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host that is not a loopback address (the page shows private data; "
        "such a server offers no erasing)",
    )
    parser.add_argument("--out", type=Path, help="write the page to this HTML file and exit")
    parser.add_argument(
        "--query",
        help="run one recall for this query and show each signal's part in its scores "
        "(the recall is logged, as every recall is)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Write the report (``--out``) or serve the page until interrupted."""
    # a mistyped path is refused: an empty new store would show nothing
    with Memory(args.url, create=False) as memory:
        if args.out is not None:
            inspection = collect(memory, user=args.user, probe=args.query)
            args.out.write_text(render_page(inspection), encoding="utf-8")
            print(f"wrote {args.out}")
            return 0
        server = InspectorServer(
            memory,
            user=args.user,
            host=args.host,
            port=args.port,
            allow_remote=args.allow_remote,
            query=args.query,
        )
        with server:
            print(f"commonplace inspect: serving {args.user!r} at {server.url}", flush=True)
            print("press Ctrl-C to stop", file=sys.stderr, flush=True)
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it stops
                server.serve_forever()
    return 0
