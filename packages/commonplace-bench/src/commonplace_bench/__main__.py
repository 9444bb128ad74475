"""``python -m commonplace_bench``: run every benchmark and regenerate docs/benchmarks.md."""

from .harness import main

raise SystemExit(main())
