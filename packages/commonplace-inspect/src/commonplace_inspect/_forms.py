"""What the served page adds to the report: the user picker, the forget buttons, the
page asking to confirm an erasure, and the page saying why something was refused.

Every form posts to ``/forget`` with the server's token (a random value a page of another
origin cannot read, so it cannot post one); the first post only asks, and nothing is
erased until the confirmation posts ``confirm=yes``. None of it needs a script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._html import document, text, user_link


@dataclass(frozen=True)
class Served:
    """The served page's extras: the store's ``users`` to switch between, the form
    ``token`` (``None`` where forgetting is not offered: a server reachable from other
    machines) and a ``notice`` of what was just erased."""

    users: tuple[str, ...]
    token: str | None = None
    notice: str | None = None


def picker(served: Served, current: str) -> str:
    """Links to every user's page; the one shown is named, not linked."""
    links = [
        f'<b aria-current="page">{text(u)}</b>'
        if u == current
        else f'<a href="{user_link(u)}">{text(u)}</a>'
        for u in served.users
    ]
    return f'<nav class="users" aria-label="Users">Users: {" ".join(links)}</nav>'


def _form(token: str, fields: Sequence[tuple[str, str]], label: str, css: str) -> str:
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{text(value)}">'
        for name, value in (("token", token), *fields)
    )
    return (
        f'<form class="{css}" method="post" action="/forget">{hidden}'
        f'<button type="submit">{text(label)}</button></form>'
    )


def forget_button(served: Served | None, user: str, record_id: str) -> str:
    """A button erasing one note or turn (after asking); nothing where not offered."""
    if served is None or served.token is None:
        return ""
    return _form(served.token, (("user", user), ("record", record_id)), "forget…", "forget")


def forget_all_button(served: Served | None, user: str) -> str:
    if served is None or served.token is None:
        return ""
    label = f"erase everything about {user}…"
    return _form(served.token, (("user", user), ("all", "yes")), label, "forget")


def notice(served: Served | None) -> str:
    if served is None or served.notice is None:
        return ""
    return f'<p class="notice" role="status">{text(served.notice)}</p>'


def confirm_page(*, token: str, user: str, record_id: str | None, what: str) -> str:
    """Asks before erasing ``what``: the button posts the same request with
    ``confirm=yes``; going back leaves everything as it was."""
    fields = [("user", user), ("all", "yes") if record_id is None else ("record", record_id)]
    fields.append(("confirm", "yes"))
    body = (
        '<main class="confirm"><section>'
        f"<h2>Erase {text(what)}?</h2>"
        "<p>This cannot be undone: it is removed from the store for good, with the turns "
        "it was written from and everything built on it.</p>"
        f"{_form(token, fields, 'Erase it', 'confirm')} "
        f'<a href="{user_link(user)}">No, go back</a>'
        "</section></main>"
    )
    return document(title="commonplace inspect: erase?", body=body, forms=True)


def problem_page(message: str, *, served: Served, user: str) -> str:
    """A page saying what went wrong and how to go on, with the user picker."""
    body = (
        '<header><h1>commonplace inspect</h1></header><main><p class="problem" role="alert">'
        f"{text(message)}</p>{picker(served, user)}</main>"
    )
    return document(title="commonplace inspect", body=body, forms=served.token is not None)
