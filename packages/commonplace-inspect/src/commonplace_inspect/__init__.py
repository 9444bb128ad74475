"""commonplace-inspect: a local web page of what the agent remembers about one user, why,
and where it came from (``commonplace inspect --user alice``).

:func:`collect` reads an :class:`Inspection` from a Memory through the core's public API;
:func:`render_page` turns it into one self-contained HTML document, every piece of memory
text escaped, under a strict Content-Security-Policy; :class:`InspectorServer` serves it
on loopback, with a page per user of the store (:func:`users`) and, there only, buttons
that erase a note, a turn or everything about a user (asked, then confirmed).
"""

from ._assets import content_security_policy
from ._collect import Flag, Inspection, collect, supersession_chains, users
from ._forms import Served
from ._html import anchor
from ._render import render_page
from ._server import InspectorServer, is_loopback

__all__ = [
    "Flag",
    "InspectorServer",
    "Inspection",
    "anchor",
    "collect",
    "content_security_policy",
    "is_loopback",
    "Served",
    "render_page",
    "supersession_chains",
    "users",
]
