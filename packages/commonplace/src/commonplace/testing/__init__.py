"""Testing helpers for commonplace and for anyone writing a backend.

:mod:`commonplace.testing.conformance` is the backend conformance suite: one
set of pytest tests that every :class:`~commonplace.stores.Backend` must pass
(the embedded SQLite store and the Weaviate store run it in this repository).
To run it against your own backend, provide a ``backend_factory`` fixture that
returns a new, empty store each time it is called, and import the suite::

    # test_my_backend.py
    import pytest
    from commonplace.testing.conformance import *  # noqa: F403

    @pytest.fixture
    def backend_factory(tmp_path):
        opened = []
        def make():
            backend = MyBackend(...)
            opened.append(backend)
            return backend
        yield make
        for backend in opened:
            backend.close()

A backend that lacks an optional capability (links, re-embedding, concurrent
writers) says so in a ``backend_capabilities`` fixture, and that group's tests
are skipped with the reason::

    @pytest.fixture
    def backend_capabilities():
        return frozenset(CAPABILITIES) - {"concurrency"}

The suite is a package, one module per capability group; see its docstring for
the names. The suite needs pytest (it is not a dependency of commonplace itself).
"""

from ._fixtures import DIM, PIN, T0, episode, note, unit

__all__ = ["DIM", "PIN", "T0", "episode", "note", "unit"]
