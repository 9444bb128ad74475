"""Progress bars as commonplace's own long jobs draw them, for integrations to share.

``progress=None`` (what every job defaults to) draws a bar on stderr only when stderr is a
terminal; ``True`` always draws one, ``False`` never does. Nothing goes to stdout.
"""

from ._progress import ProgressBar, checked_progress, shows_progress, track

__all__ = ["ProgressBar", "checked_progress", "shows_progress", "track"]
