"""The few pieces every page of the inspector is made with: escaping, anchors, and the
document around a page's body (its policy, its one stylesheet and its one script).

Text from the store only ever reaches a page through :func:`text`, which escapes it for
an element's content and for a quoted attribute alike.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from ._assets import SCRIPT, STYLE, content_security_policy

_UNSAFE_IN_ANCHOR = re.compile(r"[^A-Za-z0-9_-]")


def text(value: object) -> str:
    """``value`` as text for an element's content or a quoted attribute."""
    return html.escape(str(value), quote=True)


def anchor(prefix: str, record_id: str) -> str:
    """A fragment id for a record or episode: any character outside ``[A-Za-z0-9_-]`` is
    written as ``.XX`` (its code point in hex), so two ids never share an anchor."""
    return prefix + _UNSAFE_IN_ANCHOR.sub(lambda m: f".{ord(m.group()):x}.", record_id)


def user_link(user: str) -> str:
    """The served page of ``user``, as a quoted attribute's value: the name is
    percent-encoded whole, so it can only ever be the query's value."""
    return text("/?user=" + quote(user, safe=""))


def document(*, title: str, body: str, forms: bool) -> str:
    """A complete HTML document with a meta Content-Security-Policy (served, the same
    policy comes as a header too); ``forms`` lets its forms post to the page's own
    server, which only the served page has."""
    policy = content_security_policy(for_meta=True, forms=forms)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{policy}">
<meta name="referrer" content="same-origin">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
{body}
<script>{SCRIPT}</script>
</body>
</html>
"""
