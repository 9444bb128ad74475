"""The server helper the tests and CI use: build once, cache, start on loopback, stop."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from commonplace import Kind
from commonplace_weaviate import WeaviateBackend, WeaviateServerError
from commonplace_weaviate._cli import main
from commonplace_weaviate.server import DEFAULT_VERSION, LocalServer, binary_path, install

pytestmark = pytest.mark.weaviate


def test_a_cached_binary_is_not_built_again() -> None:
    first = install()
    again = install()
    assert again.path == first.path == binary_path(DEFAULT_VERSION)
    assert (again.built, again.seconds) == (False, 0.0)
    assert first.path.parent.name == f"weaviate-{DEFAULT_VERSION}"


def test_without_go_the_error_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no `go` on it
    with pytest.raises(WeaviateServerError, match=r"Go toolchain.*COMMONPLACE_WEAVIATE_URL"):
        install(cache_dir=tmp_path)


def test_a_failed_build_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    with pytest.raises(WeaviateServerError, match="go install"):
        install(version="0.0.0-does-not-exist", cache_dir=tmp_path)
    assert not binary_path("0.0.0-does-not-exist", cache_dir=tmp_path).exists()


def test_the_server_runs_on_loopback_without_modules_or_auto_schema(tmp_path: Path) -> None:
    node = LocalServer(install().path, data_dir=tmp_path / "data")
    env = node.environment()
    assert env["CLUSTER_BIND_ADDR"] == env["CLUSTER_ADVERTISE_ADDR"] == "127.0.0.1"
    assert env["AUTOSCHEMA_ENABLED"] == "false" and env["DEFAULT_VECTORIZER_MODULE"] == "none"
    assert env["API_BASED_MODULES_DISABLED"] == "true" and env["DISABLE_TELEMETRY"] == "true"
    assert env["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] == "true"
    with node:
        assert node.running and node.url.startswith("weaviate://127.0.0.1:")
        with WeaviateBackend(node.url + "&prefix=Probe") as backend:
            assert backend.client.get_meta()["modules"] == {}
            backend.drop()
    assert not node.running


def test_server_start_and_stop_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pidfile = tmp_path / "weaviate.pid"
    assert main(["server", "start", "--pidfile", str(pidfile), "--print-env"]) == 0
    printed = capsys.readouterr()
    assert printed.out.startswith("export COMMONPLACE_WEAVIATE_URL='weaviate://127.0.0.1:")
    assert "ready in" in printed.err
    info = json.loads(pidfile.read_text())
    try:
        with WeaviateBackend(info["url"] + "&prefix=Cli") as backend:
            backend.drop()
    finally:
        assert main(["server", "stop", "--pidfile", str(pidfile)]) == 0
    assert not pidfile.exists() and not Path(info["data"]).exists()
    # started from this process, the server is our child: reap it, then it is gone
    assert os.waitpid(int(info["pid"]), 0)[0] == int(info["pid"])
    with pytest.raises(ProcessLookupError):
        os.kill(int(info["pid"]), 0)


def test_the_benchmark_runs_on_both_stores(
    tmp_path: Path, weaviate_backend_factory: Callable[[], WeaviateBackend]
) -> None:
    from commonplace.stores import SQLiteBackend
    from commonplace_weaviate._bench import measure_raw, table

    sqlite = SQLiteBackend(tmp_path / "bench.db")
    try:
        results = [measure_raw(sqlite, notes=60, queries=4, scopes=3, label="sqlite")]
    finally:
        sqlite.close()
    weaviate = weaviate_backend_factory()
    results.append(measure_raw(weaviate, notes=60, queries=4, scopes=3, label="weaviate"))
    assert [(r.notes, len(r.search_ms)) for r in results] == [(60, 4), (60, 4)]
    assert weaviate.count(None, Kind.NOTE) == 60
    printed = table(results).splitlines()
    assert printed[2].startswith("sqlite") and printed[3].startswith("weaviate")


def test_the_recall_benchmark_times_the_backends_own_candidate_queries(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    from commonplace_weaviate._recall_bench import measure, table, trips

    url = weaviate_backend_factory().url
    runs, same = measure(url, notes=60, scopes=3, queries=6, runs=1)
    # the raw pair sends, byte for byte, gRPC requests a recall sent (in its read_batch)
    assert same
    (run,) = runs
    assert len(run.recall_ms) == len(run.raw_ms) == len(run.backend_ms) == 6
    assert run.rounds >= 6 and sum(run.requests.values()) >= run.rounds
    assert run.calls["read_batch"] == 6 and run.calls["touch_and_put"] == 6
    assert table(60, runs).splitlines()[-1].split()[:2] == ["60", "med"]
    assert trips(runs, 6).startswith("rounds per recall")
