"""``commonplace-weaviate``: migrate a store, manage a local test server, benchmark.

commonplace-weaviate migrate --from sqlite:///memory.db --to weaviate://127.0.0.1:8080
commonplace-weaviate server install            # build and cache the pinned server
commonplace-weaviate server start --pidfile P  # start it on loopback, print its URL
commonplace-weaviate server stop --pidfile P
commonplace-weaviate bench --notes 10000       # SQLite beside Weaviate
commonplace-weaviate bench --recall            # recall against the raw query it sends
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from commonplace.errors import CommonplaceError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="commonplace-weaviate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    move = commands.add_parser("migrate", help="copy an SQLite store into Weaviate and verify")
    move.add_argument("--from", dest="source", required=True, help="sqlite:///path.db")
    move.add_argument("--to", dest="target", required=True, help="weaviate://host:port?...")
    move.add_argument("--batch", type=int, default=500)
    move.add_argument("--no-verify", action="store_true", help="skip the count check")
    move.add_argument("--json", action="store_true", help="print the report as JSON")
    move.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (there are none anyway when stderr is not a terminal)",
    )

    server = commands.add_parser("server", help="a local Weaviate for tests and development")
    actions = server.add_subparsers(dest="action", required=True)
    install = actions.add_parser("install", help="build the pinned server (cached)")
    start = actions.add_parser("start", help="start a server on 127.0.0.1 in the background")
    for sub in (install, start):
        sub.add_argument("--version", default=None, help="Weaviate version (default: pinned)")
    start.add_argument("--data", type=Path, default=None, help="data folder (default: temp)")
    start.add_argument("--port", type=int, default=0, help="HTTP port (default: a free one)")
    start.add_argument("--grpc-port", type=int, default=0, help="gRPC port (default: free)")
    start.add_argument("--pidfile", type=Path, required=True, help="where to note the server")
    start.add_argument(
        "--print-env",
        action="store_true",
        help="print `export COMMONPLACE_WEAVIATE_URL=...` for eval",
    )
    stop = actions.add_parser("stop", help="stop a server started with `server start`")
    stop.add_argument("--pidfile", type=Path, required=True)

    bench = commands.add_parser("bench", help="recall latency and write throughput")
    bench.add_argument("--notes", type=int, nargs="+", default=[10_000])
    bench.add_argument("--url", default=None, help="Weaviate URL (default: start a server)")
    bench.add_argument("--queries", type=int, default=200)
    bench.add_argument("--scopes", type=int, default=10)
    bench.add_argument(
        "--raw", action="store_true", help="time the stores alone (apply, search), not Memory"
    )
    bench.add_argument(
        "--recall",
        action="store_true",
        help="Memory.recall beside the raw Weaviate queries it sends, with its round trips",
    )
    bench.add_argument("--runs", type=int, default=3, help="--recall: rounds of queries")
    bench.add_argument(
        "--server-pid",
        type=int,
        default=None,
        help="--recall with --url: the server's process id, to read its CPU time too",
    )
    bench.add_argument(
        "--prefix",
        default=None,
        help="--recall: keep the store under this collection prefix (+ the note count) and "
        "reuse it in later runs",
    )

    args = parser.parse_args(argv)
    try:
        if args.command == "migrate":
            return _migrate(args)
        if args.command == "server":
            return _server(args)
        if args.recall:
            from ._recall_bench import run as run_recall

            return run_recall(
                notes=list(args.notes),
                url=args.url,
                queries=int(args.queries),
                scopes=int(args.scopes),
                runs=int(args.runs),
                prefix=args.prefix,
                server_pid=args.server_pid,
            )
        from ._bench import run

        return run(
            notes=list(args.notes),
            url=args.url,
            queries=int(args.queries),
            scopes=int(args.scopes),
            raw=bool(args.raw),
        )
    except CommonplaceError as exc:
        print(f"commonplace-weaviate: {exc}", file=sys.stderr)
        return 2


def _migrate(args: argparse.Namespace) -> int:
    from ._migrate import migrate

    try:
        report = migrate(
            args.source,
            args.target,
            batch=args.batch,
            verify=not args.no_verify,
            progress=False if args.no_progress else None,  # None: bars on a terminal only
        )
    except CommonplaceError as exc:
        failed = getattr(exc, "report", None)
        if failed is not None:
            print(failed.table())
        raise
    print(json.dumps(report.to_json(), indent=2) if args.json else report.table())
    return 0


def _server(args: argparse.Namespace) -> int:
    from . import server as srv

    version = getattr(args, "version", None) or srv.DEFAULT_VERSION
    if args.action == "install":
        target = srv.binary_path(version)
        if not (target.is_file() and os.access(target, os.X_OK)):
            # the one long step of a first test run: say so before it starts
            print(
                f"building Weaviate {version} with `go install` into {target.parent} "
                "(once; about 5 minutes on 2 cores) ...",
                flush=True,
            )
        installed = srv.install(version=version)
        how = f"built in {installed.seconds:.1f}s" if installed.built else "already cached"
        print(f"Weaviate {version}: {installed.path} ({how})")
        return 0
    if args.action == "start":
        installed = srv.install(version=version)
        temporary = args.data is None
        data = Path(tempfile.mkdtemp(prefix="commonplace-weaviate-")) if temporary else args.data
        ports = srv.NodePorts.free()
        if args.port or args.grpc_port:
            ports = srv.NodePorts(
                http=args.port or ports.http,
                grpc=args.grpc_port or ports.grpc,
                gossip=ports.gossip,
                raft=ports.raft,
            )
        node = srv.LocalServer(
            installed.path, data_dir=data / "data", ports=ports, log_path=data / "weaviate.log"
        )
        seconds = node.start()
        pid = node.detach()
        args.pidfile.write_text(
            json.dumps(
                {
                    "pid": pid,
                    "url": node.url,
                    "data": str(data),
                    "temporary": temporary,
                    "log": str(node.log_path),
                    "build_seconds": round(installed.seconds, 2),
                    "start_seconds": round(seconds, 2),
                }
            )
        )
        if args.print_env:
            print(f"export COMMONPLACE_WEAVIATE_URL='{node.url}'")
        else:
            print(node.url)
        built = f"built in {installed.seconds:.1f}s" if installed.built else "binary cached"
        print(
            f"Weaviate {version} ({built}) ready in {seconds:.1f}s at {node.url}, pid {pid}",
            file=sys.stderr,
        )
        return 0
    info = json.loads(args.pidfile.read_text())
    _stop_pid(int(info["pid"]))
    if info.get("temporary"):
        shutil.rmtree(info["data"], ignore_errors=True)
    args.pidfile.unlink()
    print(f"stopped Weaviate (pid {info['pid']})", file=sys.stderr)
    return 0


def _stop_pid(pid: int, timeout: float = 30.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if _zombie(pid):  # exited; its new parent has not reaped it yet
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
