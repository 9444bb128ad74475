"""commonplace-mcp: a Model Context Protocol server for commonplace memory.

``commonplace mcp --user ana`` serves one user's memory over stdio (or streamable HTTP on
loopback); :func:`build_server` builds the same server in-process, to embed or to test.
See ``docs/mcp.md`` for the tools, the scope rule and the firewall.
"""

from ._cli import DEFAULT_PORT, add_command
from ._server import MAX_TOP_K, PROFILE_URI, build_server

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PORT",
    "MAX_TOP_K",
    "PROFILE_URI",
    "__version__",
    "add_command",
    "build_server",
]
