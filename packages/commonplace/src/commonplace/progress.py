"""Progress bars as commonplace's own long jobs draw them, for integrations to share.

``progress=None`` (what every job defaults to) draws a bar on stderr only when stderr is a
terminal; ``True`` always draws one, ``False`` never does. Nothing goes to stdout. A job
that goes part by part may take a ``PartCounter`` instead, a function told each part's
name and how many of it are done so far, and then draws no bar.
"""

from ._progress import PartCounter, ProgressBar, checked_progress, shows_progress, track

__all__ = ["PartCounter", "ProgressBar", "checked_progress", "shows_progress", "track"]
