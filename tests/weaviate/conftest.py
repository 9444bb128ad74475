"""Fixtures shared by the Weaviate tests (the server ones come from the plugin,
``commonplace_weaviate.testing``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from commonplace.testing import PIN
from commonplace_weaviate import WeaviateBackend


@pytest.fixture
def backend(weaviate_backend_factory: Callable[[], WeaviateBackend]) -> WeaviateBackend:
    """A fresh, empty store pinned to the conformance suite's embedder."""
    made = weaviate_backend_factory()
    made.write_pin(PIN)
    return made
