"""The memory systems compared by the benchmark harness, behind one interface.

Each module imports its framework at the top, so import the one you need; the
harness imports them lazily and reports a missing framework as "not run".
"""

from .base import Memo, Metered, Retrieved, System, Turn

__all__ = ["Memo", "Metered", "Retrieved", "System", "Turn"]
