"""commonplace-bench: offline benchmarks that keep commonplace's docs honest.

``python -m commonplace_bench`` (``nox -s bench``) runs the comparison harness: every
workload in :mod:`commonplace_bench.workloads` on commonplace and on the systems a user
would pick instead (:mod:`commonplace_bench.systems`), and writes ``docs/benchmarks.md``.

``python -m commonplace_bench.embedder_quality`` measures the hashing
embedder against real models and writes ``docs/embedders.md``. The model embedders
in :mod:`commonplace_bench.models` double as examples of plugging a real model into
``Memory(embedder=...)``; they need the ``minilm`` / ``wordllama`` extras.
"""

__version__ = "0.1.0"
