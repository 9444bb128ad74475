"""The ``commonplace`` command line: demo, write, import, recall, explain, reembed, and the
commands installed packages add (``commonplace mcp``, ``commonplace inspect``).

A package adds a command through the entry-point group ``commonplace.commands``: the name is
the command, the object a function that takes the subparsers action and adds one parser to
it, with ``set_defaults(run=...)`` as the built-in commands do. The core imports nothing of
those packages; a command named here but not installed says which package brings it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ._demo import run_demo
from ._import_lines import line_fields, line_turn, read_lines
from ._memory import Memory
from ._scope import Scope
from .errors import CommonplaceError, InvalidInputError
from .lifecycle import LifecycleReport, sleep_every_scope

# Commands that live in packages of their own, and the package that brings each: asked for
# while that package is missing, the command says what to install instead of argparse's
# "invalid choice".
OPTIONAL_COMMANDS = {"inspect": "commonplace-inspect", "mcp": "commonplace-mcp"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command in OPTIONAL_COMMANDS and command not in _added_commands(parser):
        dist = OPTIONAL_COMMANDS[command]
        print(
            f"commonplace: error: the {command!r} command comes with the {dist} package: "
            f"pip install {dist}",
            file=sys.stderr,
        )
        return 2
    args = parser.parse_args(words)
    try:
        return int(args.run(args))
    except CommonplaceError as exc:
        print(f"commonplace: error: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="commonplace", description="Memory for LLM agents that writes notes."
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"commonplace {__version__}")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="play a scripted conversation over simulated weeks")
    demo.add_argument("--url", help="store URL (default: a new file in a temporary folder)")
    demo.set_defaults(run=_demo)

    write = sub.add_parser("write", help="store one turn")
    write.add_argument("text")
    write.add_argument("--role", default="user", help="user (default), assistant, tool, system")
    _common(write)
    write.set_defaults(run=_write)

    bulk = sub.add_parser(
        "import",
        help="store many turns from a JSON Lines file, in batches, with a progress bar",
        description="Store every turn of FILE (JSON Lines, '-' for stdin): one object per "
        'line, {"text": ..., "role": "user", "user": ..., "agent": ..., "thread": ..., '
        '"at": ISO 8601, "key": ..., "speaker": ...}, only "text" required; a line without '
        "a scope takes --user/--agent/--thread. Every line is checked before anything is "
        "stored; a batch is stored whole or not at all, and running the same import again "
        "stores only what is missing.",
    )
    bulk.add_argument("file", help="JSON Lines file of turns, or - for stdin")
    bulk.add_argument("--batch", type=int, default=256, help="turns per batch (default 256)")
    bulk.add_argument(
        "--workers",
        type=int,
        default=0,
        help="processes that draft the next batch's notes while one is stored (default 0)",
    )
    _no_progress(bulk, "over the turns")
    _common(bulk)
    bulk.set_defaults(run=_import)

    recall = sub.add_parser("recall", help="compile memory for a query")
    recall.add_argument("query")
    recall.add_argument("--top-k", type=int, default=10)
    recall.add_argument("--budget", type=int, default=None, help="token budget")
    _common(recall)
    recall.set_defaults(run=_recall)

    sleep = sub.add_parser(
        "consolidate",
        help="run the lifecycle: tiers, consolidation and decay for a scope (or every scope)",
    )
    sleep.add_argument("--dry-run", action="store_true", help="report, change nothing")
    sleep.add_argument(
        "--all-scopes",
        action="store_true",
        help="run it for every user (and agent) of the store in turn, instead of one scope",
    )
    _no_progress(sleep, "over the scopes")
    _common(sleep)
    sleep.set_defaults(run=_sleep)

    explain = sub.add_parser("explain", help="show the provenance of a record")
    explain.add_argument("record_id")
    explain.add_argument("--url", help="store URL (default: $COMMONPLACE_URL or the data folder)")
    explain.add_argument("--json", action="store_true", help="print JSON")
    explain.set_defaults(run=_explain)

    reembed = sub.add_parser(
        "reembed",
        help="move a store to another embedding model (resumable: run it again to finish)",
        description="Re-embed every record of the store with the model NAME, then pin the "
        "store to it. Until it finishes the store keeps working with its old model; killed "
        "at any moment, the same command finishes the job.",
    )
    reembed.add_argument(
        "url", nargs="?", help="store URL (default: $COMMONPLACE_URL or the data folder)"
    )
    reembed.add_argument(
        "--to",
        required=True,
        metavar="NAME",
        help="the new model, by the name an installed plugin provides "
        "(e.g. commonplace-hashing-v1-256)",
    )
    reembed.add_argument("--batch", type=int, default=256, help="records per batch")
    reembed.add_argument("--json", action="store_true", help="print JSON")
    reembed.set_defaults(run=_reembed)
    for entry in sorted(entry_points(group="commonplace.commands"), key=lambda e: e.name):
        add_command: Callable[[Any], None] = entry.load()
        add_command(sub)
    return parser


def _added_commands(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:  # argparse keeps its subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def _no_progress(parser: argparse.ArgumentParser, over: str) -> None:
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help=f"no progress bar {over} (there is none anyway when stderr is not a terminal)",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help="store URL (default: $COMMONPLACE_URL or the data folder)")
    parser.add_argument("--user", help="scope: user id")
    parser.add_argument("--agent", help="scope: agent id")
    parser.add_argument("--thread", help="scope: thread id")
    parser.add_argument("--at", help="ISO 8601 time to use instead of now")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _scope(args: argparse.Namespace) -> Scope:
    return Scope(user=args.user, agent=args.agent, thread=args.thread)


def _at(args: argparse.Namespace) -> datetime | None:
    if args.at is None:
        return None
    try:
        return datetime.fromisoformat(args.at)
    except ValueError:
        raise InvalidInputError(f"--at {args.at!r} is not an ISO 8601 time") from None


def _demo(args: argparse.Namespace) -> int:
    if args.url:
        run_demo(url=args.url)
        return 0
    with tempfile.TemporaryDirectory(prefix="commonplace-demo-") as folder:
        run_demo(url="sqlite:///" + str(Path(folder) / "demo.db"))
    return 0


def _write(args: argparse.Namespace) -> int:
    with Memory(args.url) as memory:
        result = memory.write(args.text, role=args.role, scope=_scope(args), at=_at(args))
    if args.json:
        print(
            json.dumps(
                {
                    "episode_id": result.episode_id,
                    "created": result.created,
                    "note": None
                    if result.note is None
                    else {
                        "id": result.note.id,
                        "text": result.note.text,
                        "tags": result.note.tags.to_json(),
                    },
                    "skipped": result.skipped,
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    elif result.note is not None:
        print(f"{result.episode_id} -> {result.note.id}: {result.note.text}")
    else:
        print(f"{result.episode_id} -> no note: {result.skipped}")
    return 0


def _import(args: argparse.Namespace) -> int:
    # every line's shape is checked before the store is opened (or made)
    lines = [(n, line_fields(n, line)) for n, line in read_lines(args.file)]
    scope, at = _scope(args), _at(args)  # what a line without its own takes
    with Memory(args.url) as memory:
        turns = [line_turn(memory, n, fields, scope=scope, at=at) for n, fields in lines]
        progress = False if args.no_progress else None
        report = memory.import_turns(
            turns, batch=args.batch, progress=progress, workers=args.workers
        )
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(
            f"{report.turns} turns: {report.stored} stored ({report.notes} with a note, "
            f"{report.skipped} without), {report.turns - report.stored} stored before; "
            f"{report.rate:.0f} turns/s"
        )
    return 0


def _recall(args: argparse.Namespace) -> int:
    with Memory(args.url) as memory:
        recall = memory.recall(
            args.query,
            scope=_scope(args),
            top_k=args.top_k,
            budget_tokens=args.budget,
            at=_at(args),
        )
    if args.json:
        print(json.dumps(recall.to_json(), ensure_ascii=False, indent=2))
        return 0
    for item in recall.items:
        b = item.score.breakdown()
        signals = " ".join(f"{k}={v:.2f}" for k, v in b.items() if k != "total")
        print(f"{b['total']:.3f}  {item.record.id}  {item.record.text}\n       {signals}")
    print(f"\n{recall.render()}\n({recall.tokens} tokens)")
    return 0


def _sleep(args: argparse.Namespace) -> int:
    if args.all_scopes:
        return _sleep_all(args)
    with Memory(args.url) as memory:
        report = memory.sleep(scope=_scope(args), at=_at(args), dry_run=args.dry_run)
    if args.json:
        print(json.dumps(_report_json(report), ensure_ascii=False, indent=2))
        return 0
    for action in report.actions:
        print(f"{action.action:<18} {action.rule:<20} {action.record_id}  {action.detail}")
    print(f"{'would do' if report.dry_run else 'did'}: {report.counts() or 'nothing'}")
    return 0


def _report_json(report: LifecycleReport) -> dict[str, Any]:
    return {
        "dry_run": report.dry_run,
        "seconds": report.seconds,
        "counts": report.counts(),
        "actions": [
            {"action": a.action, "rule": a.rule, "record_id": a.record_id, "detail": a.detail}
            for a in report.actions
        ],
    }


def _sleep_all(args: argparse.Namespace) -> int:
    given = [f"--{name}" for name in ("user", "agent", "thread") if getattr(args, name)]
    if given:
        raise InvalidInputError(
            f"--all-scopes runs for every scope of the store; leave out {' and '.join(given)}"
        )
    at = _at(args)
    totals: Counter[str] = Counter()
    scopes: list[dict[str, Any]] = []
    with Memory(args.url) as memory:
        progress = False if args.no_progress else None
        for scope, report in sleep_every_scope(
            memory, at=at, dry_run=args.dry_run, progress=progress
        ):
            totals.update(report.counts())
            if args.json:
                fields = {"user": scope.user, "agent": scope.agent, "thread": scope.thread}
                named = {k: v for k, v in fields.items() if v}
                scopes.append({"scope": named, **_report_json(report)})
            else:  # the counts alone: a line per scope, not every action of the store
                scopes.append({"scope": str(scope), "counts": report.counts()})
    if args.json:
        whole = {"dry_run": args.dry_run, "counts": dict(totals), "scopes": scopes}
        print(json.dumps(whole, ensure_ascii=False, indent=2))
        return 0
    for done in scopes:
        print(f"{done['scope']}: {done['counts'] or 'nothing'}")
    doing = "would do" if args.dry_run else "did"
    print(f"{doing} over {len(scopes)} scope{'' if len(scopes) == 1 else 's'}: ", end="")
    print(dict(totals) or "nothing")
    return 0


def _explain(args: argparse.Namespace) -> int:
    with Memory(args.url) as memory:
        chain = memory.explain(args.record_id)
    if args.json:
        print(json.dumps(chain.to_json(), ensure_ascii=False, indent=2))
        return 0
    for node in chain.walk():
        print(f"{node.record.kind.value:<9} {node.record.id}  {node.record.text}")
    return 0


def _reembed(args: argparse.Namespace) -> int:
    from .embedders import reembed

    report = reembed(args.url, to=args.to, batch=args.batch)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(report)
    return 0
