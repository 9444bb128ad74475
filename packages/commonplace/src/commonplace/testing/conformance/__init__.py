"""The backend conformance suite: what every commonplace store must do.

Import it into a test module that defines a ``backend_factory`` fixture (a
callable returning a new, empty backend each call; the fixture closes what it
made)::

    from commonplace.testing.conformance import *  # noqa: F403

Optionally override ``backend_reopen`` (``backend -> a second backend on the
same store``); by default it opens ``backend.url`` through the installed
``commonplace_backend`` hooks, as ``Memory(url)`` would.

The suite is split per capability, gated like LangGraph's checkpointer
conformance suite: a backend declares what it can do in a ``backend_capabilities``
fixture (a collection of names from :data:`CAPABILITIES`; by default all of
them), and the groups of the capabilities it leaves out are skipped, each test
with a reason naming the missing capability::

    @pytest.fixture
    def backend_capabilities():
        return frozenset(CAPABILITIES) - {"reembed"}

An unknown name, or leaving out one of :data:`REQUIRED_CAPABILITIES`, fails
every test at setup. The capabilities and their groups (one module each):

- ``records`` (required, ``_records``, ``_reembed``, ``_safety``): episodes and
  idempotency, records, counters and tiers, other updates, supersession and
  merges, deletes (``TestEpisodes``, ``TestRecords``, ``TestCounters``,
  ``TestUpdates``, ``TestSupersession``, ``TestDeletes``), the embedder pin
  (``TestPin``), atomicity or, for stores without transactions, retry safety
  (``TestAtomicity``: a write batch commits its turns with their links, ledger entries and
  cards, all or none), the store as a whole (``TestStoreLifecycle``), and the
  protocol's members called directly (``TestProtocolMembers``);
- ``scopes`` (required, ``_scopes``): scope isolation and ``delete_scope``
  (``TestScopes``);
- ``search`` (required, ``_search``, ``_batches``): vector and keyword candidates
  (``TestSearch``), and reads asked together, a recall's first reads
  (``TestReadBatches``: ``Store.read_batch``, one ``Backend.read``);
- ``bookkeeping`` (required, ``_bookkeeping``, ``_ledger``, ``_batches``): the ledger
  itself (``TestLedger``) and what the core keeps in it: the audit log, recall logs,
  conflicts and cards (``TestBookkeeping``), and a recall's log written with the accesses
  it counts (``TestRecallWrites``: one ``Backend.apply``);
- ``links`` (optional, ``_bookkeeping``): links between records (``TestLinks``);
- ``reembed`` (optional, ``_reembed``): moving the vectors to another embedding
  model (``TestReembed``);
- ``concurrency`` (optional, ``_safety``): threads and two instances writing to
  one store at once (``TestConcurrency``).

Most groups reach the backend through :class:`~commonplace.stores.Store`, as the
core does (the ``store`` fixture); ``_ledger`` calls the protocol's members directly.
A declared optional capability must be backed by its protocol (``links``:
:class:`~commonplace.stores.LinkGraph`, ``reembed``:
:class:`~commonplace.stores.Reembedding`). The shared fixtures, helpers and the gate
are in ``_core``. The tests assert
behaviour only, never timings.
"""

from ._batches import TestReadBatches, TestRecallWrites
from ._bookkeeping import TestBookkeeping, TestLinks
from ._core import (
    CAPABILITIES,
    REQUIRED_CAPABILITIES,
    backend,
    backend_capabilities,
    backend_reopen,
    store,
)
from ._ledger import TestLedger, TestProtocolMembers
from ._records import (
    TestCounters,
    TestDeletes,
    TestEpisodes,
    TestRecords,
    TestSupersession,
    TestUpdates,
)
from ._reembed import TestPin, TestReembed
from ._safety import TestAtomicity, TestConcurrency, TestStoreLifecycle
from ._scopes import TestScopes
from ._search import TestSearch

__all__ = [
    "CAPABILITIES",
    "REQUIRED_CAPABILITIES",
    "TestAtomicity",
    "TestBookkeeping",
    "TestConcurrency",
    "TestCounters",
    "TestDeletes",
    "TestEpisodes",
    "TestLedger",
    "TestLinks",
    "TestPin",
    "TestProtocolMembers",
    "TestReadBatches",
    "TestRecallWrites",
    "TestRecords",
    "TestReembed",
    "TestScopes",
    "TestSearch",
    "TestStoreLifecycle",
    "TestSupersession",
    "TestUpdates",
    "backend",
    "backend_capabilities",
    "backend_reopen",
    "store",
]
