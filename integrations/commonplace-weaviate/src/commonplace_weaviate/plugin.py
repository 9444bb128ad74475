"""The commonplace plugin: serves ``weaviate://`` and ``weaviates://`` store URLs.

Registered through the ``commonplace`` entry-point group, so once this package is
installed ``Memory("weaviate://127.0.0.1:8080")`` opens a :class:`WeaviateBackend`.
"""

from __future__ import annotations

from commonplace import hookimpl
from commonplace.stores import Backend

from ._url import SCHEMES

__all__ = ["commonplace_backend"]


@hookimpl
def commonplace_backend(url: str, scheme: str) -> Backend | None:
    """Open ``url`` when its scheme is ``weaviate`` or ``weaviates``; otherwise pass."""
    if scheme not in SCHEMES:
        return None
    from ._backend import WeaviateBackend

    return WeaviateBackend(url)
