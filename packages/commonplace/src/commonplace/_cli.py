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
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, TextIO

from ._demo import run_demo
from ._import_lines import line_fields, line_turn, read_lines
from ._listing import DERIVED_KINDS
from ._memory import Memory
from ._plugins import default_url
from ._scope import Scope
from .errors import CommonplaceError, InvalidInputError, InvalidScopeError, NotFoundError
from .lifecycle import LifecycleReport, every_scope, sleep_every_scope
from .stores import refuse_missing_store

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
    except BrokenPipeError:
        # the reader went away (`commonplace list | head`): what it did not read is not an
        # error; stdout goes to /dev/null so that the exit's flush does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a tool killed by the signal would


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

    listing = sub.add_parser(
        "list", help="list what a user (or agent, or thread) remembers, oldest first"
    )
    listing.add_argument(
        "--kind",
        action="append",
        choices=[k.value for k in DERIVED_KINDS],
        help="only this kind (repeat for more; default: notes, summaries and procedures)",
    )
    listing.add_argument("--limit", type=int, default=100, help="records a page (default 100)")
    listing.add_argument("--offset", type=int, default=0, help="skip this many (paging)")
    _scoped(listing)
    listing.set_defaults(run=_list)

    export = sub.add_parser(
        "export",
        help="write everything a scope remembers as JSON Lines, one record a line with its id",
    )
    export.add_argument("--out", type=Path, help="write to this file (default: stdout)")
    export.add_argument(
        "--no-episodes", action="store_true", help="leave out the turns kept as evidence"
    )
    _scoped(export, json_flag=False)
    export.set_defaults(run=_export)

    forget = sub.add_parser(
        "forget",
        help="erase one record (with what was derived from it) or all of a scope's memory",
        description="Erase the record ID and everything derived from it (its evidence too, "
        "unless --keep-evidence), or, without an ID, everything the scope remembers. "
        "Forgetting is for good: the words are erased from the store.",
    )
    forget.add_argument("record_id", nargs="?", help="the id of a record or an episode")
    forget.add_argument(
        "--keep-evidence", action="store_true", help="keep the turns a note was written from"
    )
    forget.add_argument("--yes", action="store_true", help="do not ask before erasing")
    _scoped(forget)
    forget.set_defaults(run=_forget)

    reembed = sub.add_parser(
        "reembed",
        help="move a store to another embedding model (resumable: run it again to finish)",
        description="Re-embed every record of the store with the model NAME, then pin the "
        "store to it. Until it finishes the store keeps working with its old model; killed "
        "at any moment, the same command finishes the job.",
    )
    reembed.add_argument("--url", help="store URL (default: $COMMONPLACE_URL or the data folder)")
    # the store was once given positionally; still read, no longer shown
    reembed.add_argument("old_url", nargs="?", help=argparse.SUPPRESS)
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
    _scoped(parser)
    parser.add_argument("--at", help="ISO 8601 time to use instead of now")


def _scoped(parser: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    parser.add_argument("--url", help="store URL (default: $COMMONPLACE_URL or the data folder)")
    parser.add_argument("--user", help="scope: user id")
    parser.add_argument("--agent", help="scope: agent id")
    parser.add_argument("--thread", help="scope: thread id")
    if json_flag:
        parser.add_argument("--json", action="store_true", help="print JSON")


def _scope(args: argparse.Namespace) -> Scope:
    """The scope the command line names, with errors in its words (``--user``)."""
    given = {name: getattr(args, name) for name in ("user", "agent", "thread")}
    if all(value is None for value in given.values()):
        raise InvalidInputError("say whose memory: --user NAME (or --agent NAME, --thread ID)")
    for name, value in given.items():
        if value is None:
            continue
        if not value.strip():
            raise InvalidInputError(f"--{name} is empty; give a name or leave --{name} out")
        try:
            Scope(**{name: value})
        except InvalidScopeError as exc:
            reason = str(exc).split(";")[0]
            raise InvalidInputError(f"--{name} {value!r} cannot be a scope: {reason}") from None
    return Scope(**given)


def _store_url(args: argparse.Namespace) -> str:
    """The store a command works on: ``--url``, else $COMMONPLACE_URL, else the default."""
    return str(args.url or default_url())


def _reading(args: argparse.Namespace) -> Memory:
    """A Memory over a store that must exist already: a read never creates one."""
    return Memory(_store_url(args), create=False)


def _writing(args: argparse.Namespace) -> Memory:
    """A Memory that creates its store on first use, and says so on stderr."""
    url = _store_url(args)
    try:
        refuse_missing_store(url)
    except NotFoundError:
        memory = Memory(url)
        print(f"commonplace: created a new store at {url}", file=sys.stderr)
        return memory
    return Memory(url)


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
    scope, at = _scope(args), _at(args)  # checked before a store is made
    with _writing(args) as memory:
        result = memory.write(args.text, role=args.role, scope=scope, at=at)
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
                        "tags": result.note.tags.to_json(turn_terms=False),
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
    # what a line without its own takes (a file whose lines name their own needs none)
    named = any(getattr(args, name) is not None for name in ("user", "agent", "thread"))
    scope, at = _scope(args) if named else None, _at(args)
    with _writing(args) as memory:
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
    scope = _scope(args)
    with _reading(args) as memory:
        recall = memory.recall(
            args.query, scope=scope, top_k=args.top_k, budget_tokens=args.budget, at=_at(args)
        )
        if not recall.items and not recall.profile:
            _hint_unknown_scope(memory, scope)
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
    with _reading(args) as memory:
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
    with _reading(args) as memory:
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
    with _reading(args) as memory:
        chain = memory.explain(args.record_id)
    if args.json:
        print(json.dumps(chain.to_json(), ensure_ascii=False, indent=2))
        return 0
    for node in chain.walk():
        print(f"{node.record.kind.value:<9} {node.record.id}  {node.record.text}")
    return 0


def _reembed(args: argparse.Namespace) -> int:
    from .embedders import reembed

    if args.url and args.old_url and args.url != args.old_url:
        raise InvalidInputError("give the store once, with --url")
    url = str(args.url or args.old_url or default_url())
    refuse_missing_store(url)  # re-embedding a store that is not there creates nothing
    report = reembed(url, to=args.to, batch=args.batch)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(report)
    return 0


def _hint_unknown_scope(memory: Memory, scope: Scope) -> None:
    """Tell on stderr that a scope holds nothing, and which users the store knows."""
    if memory.count(scope=scope) or memory.count("episode", scope=scope):
        return
    users = sorted({s.user for s in every_scope(memory.store) if s.user})
    known = f"users in this store: {', '.join(users[:10])}" if users else "the store is empty"
    print(f"commonplace: nothing is remembered for {_flags(scope)}; {known}", file=sys.stderr)


def _flags(scope: Scope) -> str:
    named = (("user", scope.user), ("agent", scope.agent), ("thread", scope.thread))
    return " ".join(f"--{name} {value}" for name, value in named if value is not None)


def _list(args: argparse.Namespace) -> int:
    scope = _scope(args)
    kinds = args.kind or [k.value for k in DERIVED_KINDS]
    with _reading(args) as memory:
        page = memory.records(scope=scope, kinds=kinds, limit=args.limit, offset=args.offset)
        if not page.items and args.offset == 0:
            _hint_unknown_scope(memory, scope)
    if args.json:
        print(json.dumps({"records": page.items, "next_offset": page.next_offset}, indent=2))
        return 0
    for item in page.items:
        past = f" (replaced by {item['superseded_by']})" if item["superseded_by"] else ""
        print(f"{item['id']}  {item['kind']:<9} {item['created_at'][:10]}  {item['text']}{past}")
    if page.next_offset is not None:
        print(f"... more: --offset {page.next_offset}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    scope = _scope(args)
    with _reading(args) as memory:
        rows = memory.export(scope=scope, episodes=not args.no_episodes)
        if args.out is None:
            count = _write_lines(rows, sys.stdout)
        else:
            with args.out.open("w", encoding="utf-8") as out:
                count = _write_lines(rows, out)
    where = "" if args.out is None else f" to {args.out}"
    print(f"commonplace: exported {count} line{'' if count == 1 else 's'}{where}", file=sys.stderr)
    return 0


def _write_lines(rows: Iterable[dict[str, Any]], out: TextIO) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def _forget(args: argparse.Namespace) -> int:
    scope = _scope(args)
    what = args.record_id or f"everything remembered for {_flags(scope)}"
    if not args.yes and not _confirmed(f"erase {what}?"):
        raise InvalidInputError(f"not erased; to erase {what}, add --yes")
    with _reading(args) as memory:
        if args.record_id is not None:
            report = memory.forget(
                args.record_id, scope=scope, include_evidence=not args.keep_evidence
            )
            removed = list(report.removed)
            counts = {"removed": len(removed)}
        else:
            counts = dict(memory.forget_scope(scope))
            removed = []
    if args.json:
        print(json.dumps({"counts": counts, "removed": removed}, indent=2))
    elif removed:
        print(f"erased {len(removed)}: {' '.join(removed)}")
    else:
        print(
            "erased " + (", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing")
        )
    return 0


def _confirmed(question: str) -> bool:
    """Ask on the terminal; without one (a script, a pipe) nothing is confirmed."""
    if not sys.stdin.isatty():
        return False
    answer = input(f"{question} [y/N] ")
    return answer.strip().lower() in ("y", "yes")
