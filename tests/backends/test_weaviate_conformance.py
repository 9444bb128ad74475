"""The backend conformance suite against a real Weaviate server.

The server comes from the ``commonplace_weaviate`` pytest plugin: the one named by
``--weaviate-url`` / ``$COMMONPLACE_WEAVIATE_URL``, or the pinned Weaviate built and
started on loopback for this run. Each store is its own set of collections.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from commonplace.stores import Backend
from commonplace.testing.conformance import *  # noqa: F403

pytestmark = pytest.mark.weaviate


@pytest.fixture
def backend_factory(weaviate_backend_factory: Callable[[], Backend]) -> Callable[[], Backend]:
    return weaviate_backend_factory
