"""``python -m commonplace``: the same as the ``commonplace`` command."""

from ._cli import main

raise SystemExit(main())
