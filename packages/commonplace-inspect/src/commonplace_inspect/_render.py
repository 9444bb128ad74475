"""The inspector's page: one HTML document, every piece of memory text escaped.

Text from the store (notes, turns, cards, tags, audit details, ids) only ever reaches the
page through :func:`_text`, which escapes it for an element's content and for a quoted
attribute alike (a user's name in a link is percent-encoded first); it is never placed
in the script, the stylesheet, a URL scheme or an unquoted attribute. Anchors are built
from ids by :func:`anchor`, which keeps only letters, digits, ``_`` and ``-``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from commonplace import Episode, Record, Role, Status, Tier
from commonplace.stores import RecallLog

from ._collect import Flag, Inspection
from ._forms import Served, forget_all_button, forget_button, notice, picker
from ._html import anchor, document
from ._html import text as _text


def _when(at: datetime | None) -> str:
    return "—" if at is None else _text(at.strftime("%Y-%m-%d %H:%M"))


def _ref(inspection: Inspection, record_id: str) -> str:
    """A link to a record of the page, or the id as text when the page has no such record
    (forgotten, or outside the user's scope)."""
    record = inspection.record(record_id)
    if record is None:
        turn = inspection.forgotten_from.get(record_id)
        if turn is not None:
            return (
                f'<span class="chip">forgotten</span> <code>{_text(record_id)}</code>, '
                f'written from <a class="ref" href="#{anchor("ep-", turn.id)}">'
                f"“{_text(_short(turn.text))}”</a>"
            )
        return f"<code>{_text(record_id)}</code>"
    return f'<a class="ref" href="#{anchor("rec-", record.id)}">{_text(_short(record.text))}</a>'


def _why(text: str) -> str:
    """A section's opening line: what it shows and why it matters (fixed text)."""
    return f'<p class="why">{text}</p>'


def _empty(text: str) -> str:
    return f'<p class="empty">{text}</p>'


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_page(inspection: Inspection, *, served: Served | None = None) -> str:
    """The whole page for one user: a complete HTML document with a meta
    Content-Security-Policy (served, the same policy comes as a header too). ``served``
    adds what only the server can offer: the user picker and the forget buttons."""
    sections = [
        ("card", "Profile card", _card(inspection)),
        ("notes", "Notes by tier", _notes(inspection, served)),
        ("chains", "Supersession chains", _chains(inspection)),
        ("episodes", "Evidence: the turns", _episodes(inspection, served)),
        ("recalls", "Last recalls", _recalls(inspection)),
        ("audit", "Lifecycle audit log", _audit(inspection)),
        ("conflicts", "Disagreement flags", _conflicts(inspection)),
    ]
    nav = " ".join(f'<a href="#{key}">{title}</a>' for key, title, _ in sections)
    body = "\n".join(
        f'<section id="{key}">\n<h2>{title}</h2>\n{content}\n</section>'
        for key, title, content in sections
    )
    users = "" if served is None else picker(served, inspection.user)
    header = f"""<header>
<h1>What commonplace remembers about <span id="user">{_text(inspection.user)}</span></h1>
<span class="where">{_text(inspection.url)} · read {_when(inspection.read_at)} UTC</span>
<input id="filter" type="search" placeholder="Search notes, turns, logs…"
 aria-label="Search the page" autocomplete="off">
<span id="filter-count" aria-live="polite"></span>
{forget_all_button(served, inspection.user)}
<nav>{nav}</nav>
{users}
</header>"""
    return document(
        title=f"commonplace inspect: {_text(inspection.user)}",
        body=f"{header}\n<main>\n{notice(served)}\n{body}\n</main>",
        forms=served is not None and served.token is not None,
    )


# -- sections ---------------------------------------------------------------------------


def _card(inspection: Inspection) -> str:
    card = inspection.card
    why = _why(
        "The card the agent sees first in every recall, rewritten from the notes as they change."
    )
    if card is None:
        text = _empty("No profile card yet: it is written once enough notes exist.")
    else:
        text = (
            f'<div data-item><pre class="card">{_text(card.text)}</pre>'
            f'<div class="meta">rewritten {_when(card.updated_at)}</div></div>'
        )
    fields = _profile_fields(inspection.profile)
    return why + text + fields


def _profile_fields(profile: Mapping[str, Any]) -> str:
    rows = []
    for name, value in profile.items():
        if not value:
            continue
        if isinstance(value, Mapping):
            shown = "; ".join(f"{k}: {v}" for k, v in value.items())
        else:
            shown = "; ".join(
                " ".join(map(str, v)) if isinstance(v, list) else str(v) for v in value
            )
        rows.append(f"<tr data-item><th>{_text(name)}</th><td>{_text(shown)}</td></tr>")
    if not rows:
        return ""
    return "<h3>Its fields</h3><table>" + "".join(rows) + "</table>"


_TIER_WHY = {
    Tier.HOT: "always shown to the agent",
    Tier.WARM: "found when a question is about them",
    Tier.COLD: "kept, ranked lower until used again",
}


def _notes(inspection: Inspection, served: Served | None) -> str:
    why = _why(
        "Derived records (notes, summaries, procedures) with their tags and "
        "the counters their score is made of. Open “evidence” to read the turns a note "
        "was written from."
    )
    active = [r for r in inspection.records if r.status is Status.ACTIVE]
    inactive = [r for r in inspection.records if r.status is not Status.ACTIVE]
    parts = [why]
    for tier in (Tier.HOT, Tier.WARM, Tier.COLD):
        group = [r for r in active if r.tier is tier]
        parts.append(
            f'<h3 class="tier-{tier.value}">{tier.value} ({len(group)}): {_TIER_WHY[tier]}</h3>'
        )
        parts.extend(_note(inspection, r, served) for r in group)
        if not group:
            parts.append(_empty("none"))
    if inactive:
        parts.append(f"<h3>no longer active ({len(inactive)}): superseded or removed</h3>")
        parts.extend(_note(inspection, r, served) for r in inactive)
    if not inspection.records:
        parts.append(_empty("No notes for this user."))
    return "\n".join(parts)


def _note(inspection: Inspection, record: Record, served: Served | None) -> str:
    tags = record.tags
    chips = [f"{record.kind.value}", f"{record.status.value}", f"{record.tier.value}"]
    if record.pinned:
        chips.append("pinned")
    chips += [f"about {e}" for e in tags.entities]
    chips.append(tags.modality.value)
    if tags.key is not None:
        chips.append(f"{tags.key.subject}.{tags.key.predicate} = {tags.value}")
    if tags.emotion:
        chips.append(f"feels {tags.emotion}")
    if tags.event:
        chips.append(f"event: {tags.event}")
    chip_html = "".join(f'<span class="chip">{_text(c)}</span>' for c in chips)
    scores = (
        f"importance <b>{record.importance:.2f}</b> · retrieved <b>{record.access_count}</b> · "
        f"used <b>{record.used_count}</b> · ignored <b>{record.ignored_count}</b> · "
        f"last used {_when(record.last_access)} · written {_when(record.created_at)}"
    )
    validity = ""
    if record.valid_from is not None or record.valid_to is not None:
        validity = f" · valid {_when(record.valid_from)} → {_when(record.valid_to)}"
    if record.superseded_by:
        validity += f" · superseded by {_ref(inspection, record.superseded_by)}"
    return (
        f'<article class="note status-{_text(record.status.value)}" '
        f'id="{anchor("rec-", record.id)}" data-item>'
        f'<div class="text">{_text(record.text)}</div>'
        f'<div class="meta">{chip_html} <code>{_text(record.id)}</code> '
        f"{forget_button(served, inspection.user, record.id)}</div>"
        f'<div class="meta">{scores}{validity}{_marks(inspection, record.id)}</div>'
        f"{_evidence(inspection, record)}</article>"
    )


def _evidence(inspection: Inspection, record: Record) -> str:
    turns = [inspection.episodes[e] for e in inspection.sources.get(record.id, ())]
    derived = [s for s in record.provenance if inspection.record(s) is not None]
    label = f"evidence ({len(turns)} turn{'s' if len(turns) != 1 else ''})"
    inner = "".join(_quote(t) for t in turns) or _empty("its turns were forgotten")
    if derived:
        inner += (
            "<div class='meta'>built from "
            + ", ".join(_ref(inspection, s) for s in derived)
            + "</div>"
        )
    return f'<details class="evidence"><summary>{label}</summary>{inner}</details>'


def _quote(turn: Episode) -> str:
    return (
        f'<blockquote class="turn">{_text(turn.text)}</blockquote>'
        f'<div class="meta">{_text(turn.role.value)} turn, {_when(turn.at)} · '
        f'<a class="ref" href="#{anchor("ep-", turn.id)}">{_text(turn.id)}</a></div>'
    )


def _chains(inspection: Inspection) -> str:
    why = _why(
        "A new fact replaces an old one without erasing it: the old note "
        "stays, valid until the new one was said."
    )
    if not inspection.chains:
        return why + _empty("Nothing has been superseded.")
    rows = []
    for chain in inspection.chains:
        links = '<span class="arrow">→</span>'.join(
            f'<div class="link"><a class="ref" href="#{anchor("rec-", r.id)}">'
            f'{_text(r.text)}</a><div class="meta">valid {_when(r.valid_from)} → '
            f"{_when(r.valid_to)}</div></div>"
            for r in chain
        )
        rows.append(f'<div class="chain" data-item>{links}</div>')
    return why + "\n".join(rows)


def _episodes(inspection: Inspection, served: Served | None) -> str:
    why = _why(
        "The raw turns, kept as said: what the user said first, newest first. Notes are "
        "written from user turns only; an assistant's turn is evidence of the "
        "conversation, never a note, and is folded away below."
    )
    cited: dict[str, list[str]] = {}
    for record_id, turn_ids in inspection.sources.items():
        for turn_id in turn_ids:
            cited.setdefault(turn_id, []).append(record_id)
    turns = sorted(inspection.episodes.values(), key=lambda e: (e.at, e.id), reverse=True)
    if not turns:
        return why + _empty("No turns stored for this user.")
    # a person reads for what they said: the assistant's replies would bury it
    theirs = [t for t in turns if t.role is not Role.ASSISTANT]
    replies = [t for t in turns if t.role is Role.ASSISTANT]
    parts = [why, f"<h3>Said by {_text(inspection.user)} ({len(theirs)})</h3>"]
    parts.extend(_turn(inspection, t, cited, served) for t in theirs)
    if not theirs:
        parts.append(_empty("none"))
    if replies:
        parts.append(
            f'<details class="assistant"><summary>The assistant\'s turns ({len(replies)})'
            "</summary>"
            + "\n".join(_turn(inspection, t, cited, served) for t in replies)
            + "</details>"
        )
    return "\n".join(parts)


def _turn(
    inspection: Inspection, turn: Episode, cited: Mapping[str, list[str]], served: Served | None
) -> str:
    notes = cited.get(turn.id, [])
    used = "; ".join(_ref(inspection, n) for n in notes) if notes else "no note"
    return (
        f'<article class="episode" id="{anchor("ep-", turn.id)}" data-item>'
        f'<blockquote class="turn">{_text(turn.text)}</blockquote>'
        f'<div class="meta"><b>{_text(turn.role.value)}</b> · {_when(turn.at)} · '
        f"<code>{_text(turn.id)}</code> · {_text(_scope_label(turn))} · "
        f"notes: {used} {forget_button(served, inspection.user, turn.id)}</div></article>"
    )


def _scope_label(turn: Episode) -> str:
    parts = [
        f"{k} {v}" for k, v in (("agent", turn.scope.agent), ("thread", turn.scope.thread)) if v
    ]
    return ", ".join(parts) or "no thread"


_SIGNALS = ("semantic", "keyword", "recency", "frequency", "importance")
_FACTORS = ("gate", "tier_factor", "modality_factor", "total")
_HEADINGS = {"tier_factor": "tier ×", "modality_factor": "modality ×"}


def _recalls(inspection: Inspection) -> str:
    why = _why(
        "What each recall was asked, what it retrieved and why (each signal's part in the "
        "score), and how much its context showed; <code>--query</code> runs one recall "
        "now to show every record it considered."
    )
    parts = [why, _probe(inspection)]
    if not inspection.recalls:
        parts.append(_empty("No recall logged for this user."))
        return "\n".join(parts)
    rows = []
    for log in inspection.recalls:
        answered = "not yet" if log.feedback_at is None else _when(log.feedback_at)
        # the search's picks first, with their signals; then what the context showed
        # besides (hot and recent notes): a recall that searched for nothing still
        # showed those (logs older than shown_ids hold the picks alone)
        besides = [r for r in log.shown_ids if r not in log.item_ids]
        retrieved = "<br>".join(_scored_ref(inspection, log, r) for r in log.item_ids)
        if besides:
            retrieved += (
                ("<br>" if retrieved else "")
                + '<span class="signals">shown besides (always or lately remembered):</span>'
                + "<br>"
                + "<br>".join(_ref(inspection, r) for r in besides)
            )
        shown = len(set(log.shown_ids) | set(log.item_ids))
        asked = _text(log.query) if log.query else "<em>not logged</em>"
        rows.append(
            f"<tr data-item><td>{_when(log.at)}<br><code>{_text(log.id)}</code></td>"
            f'<td class="recall-query">{asked}</td>'
            f'<td class="recall-shown">{retrieved or "nothing"}</td>'
            f'<td class="num">{shown}</td><td>{answered}</td></tr>'
        )
    parts.append(
        "<table><tr><th>when</th><th>asked</th><th>what it showed, with each signal</th>"
        "<th>shown</th><th>answered</th></tr>" + "".join(rows) + "</table>"
    )
    return "\n".join(parts)


def _scored_ref(inspection: Inspection, log: RecallLog, record_id: str) -> str:
    scores = log.scores.get(record_id)
    if not scores:
        return _ref(inspection, record_id)
    signals = " ".join(
        f"{_text(name)} {float(scores.get(name, 0.0)):.2f}"
        for name in (*_SIGNALS, "gate")
        if name in scores
    )
    total = float(scores.get("total", 0.0))
    return (
        f'{_ref(inspection, record_id)} <span class="score">{total:.3f}</span>'
        f'<br><span class="signals">{signals}</span>'
    )


def _probe(inspection: Inspection) -> str:
    probe = inspection.probe
    if probe is None:
        return ""
    head = "".join(
        f'<th class="num">{_HEADINGS.get(name, name)}</th>' for name in (*_SIGNALS, *_FACTORS)
    )
    rows = []
    for item in probe.items:
        scores = item.score.breakdown()
        cells = "".join(
            f'<td class="num">{scores.get(name, 0.0):.3f}</td>' for name in (*_SIGNALS, *_FACTORS)
        )
        rows.append(
            f"<tr data-item><td>{_ref(inspection, item.record.id)}"
            f"{_marks(inspection, item.record.id)}</td>"
            f"<td>{_text(item.section or 'left out')}</td>{cells}</tr>"
        )
    flagged = len(probe.disagreements)
    return (
        f'<h3 id="probe">The recall for “<span class="probe-query">{_text(probe.query)}</span>”'
        f", signal by signal</h3>"
        f'<div class="wide"><table class="signals"><tr><th>record</th><th>section</th>{head}</tr>'
        f"{''.join(rows)}</table></div>"
        + (
            f'<p class="meta">It flagged {flagged} pair{"s" if flagged != 1 else ""} as '
            'disagreeing: see <a href="#flags">the flags</a>.</p>'
            if flagged
            else ""
        )
    )


def _audit(inspection: Inspection) -> str:
    why = _why(
        "Everything the lifecycle did, newest first: tier moves, "
        "summaries, conflicts resolved, and what was forgotten and why."
    )
    if not inspection.audit:
        return why + _empty("The lifecycle has not acted on this user yet.")
    rows = "".join(
        f"<tr data-item><td>{_when(e.at)}</td><td>{_text(e.action)}</td><td>{_text(e.rule)}</td>"
        f"<td>{_ref(inspection, e.record_id)}</td><td>{_text(e.detail)}</td></tr>"
        for e in inspection.audit
    )
    return (
        why
        + "<table><tr><th>when</th><th>action</th><th>rule</th><th>record</th><th>why</th></tr>"
        + rows
        + "</table>"
    )


def _marks(inspection: Inspection, record_id: str) -> str:
    """ "(disagrees with …)" for each flagged pair naming the record, linking to the
    pair in the flags section (which lists every one: both read ``inspection.flags``)."""
    return "".join(
        f' <span class="mark">(disagrees with '
        f"{_ref(inspection, f.second if f.first == record_id else f.first)}, "
        f'<a class="ref" href="#{_flag_anchor(f)}">why</a>)</span>'
        for f in inspection.flags_of(record_id)
    )


def _flag_anchor(flag: Flag) -> str:
    return anchor("flag-", "-".join(sorted((flag.first, flag.second))))


def _conflicts(inspection: Inspection) -> str:
    why = _why(
        "Pairs the agent will not merge or choose between until someone decides: two "
        "records that contradict each other, and two people with one name, say. Every "
        "recall that shows one of a pair marks it “disagrees with”."
    )
    flags = "".join(
        f'<tr data-item id="{_flag_anchor(f)}"><td>{_ref(inspection, f.first)}</td>'
        f"<td>{_ref(inspection, f.second)}</td><td>{_text(f.reason)}</td>"
        f"<td>{_FLAGGED_BY[f.source]}</td></tr>"
        for f in inspection.flags
    )
    parts = [why, '<h3 id="flags">Records that disagree</h3>']
    if flags:
        parts.append(
            "<table><tr><th>one says</th><th>the other says</th><th>why</th>"
            f"<th>flagged by</th></tr>{flags}</table>"
        )
    else:
        parts.append(_empty("No two records flagged as disagreeing."))
    parts.append("<h3>People or things with one name</h3>")
    if not inspection.conflicts:
        parts.append(_empty("No disagreement flagged."))
        return "\n".join(parts)
    rows = []
    for c in inspection.conflicts:
        state = (
            "open"
            if c.resolved_at is None
            else f"resolved {_when(c.resolved_at)}: {_text(c.resolution or '')}"
        )
        records = "<br>".join(_ref(inspection, r) for r in c.record_ids)
        rows.append(
            f"<tr data-item><td>{_text(c.entity)}</td><td>{_text(c.reason)}</td>"
            f"<td>{records}</td><td>{_when(c.created_at)}</td><td>{state}</td></tr>"
        )
    parts.append(
        "<table><tr><th>about</th><th>why</th><th>records</th><th>flagged</th><th>state</th></tr>"
        + "".join(rows)
        + "</table>"
    )
    return "\n".join(parts)


_FLAGGED_BY = {
    "recall": "the recall for <code>--query</code>",
    "dispute": "the writer, as it was said",
}
