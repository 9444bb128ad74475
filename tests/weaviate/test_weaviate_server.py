"""The server helper the tests and CI use: build once, cache, start on loopback, stop."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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
    # the raw pair sends, byte for byte, gRPC requests a recall sent (in its read)
    assert same
    (run,) = runs
    assert len(run.recall_ms) == len(run.raw_ms) == len(run.backend_ms) == 6
    assert run.rounds >= 6 and sum(run.requests.values()) >= run.rounds
    assert run.calls["read"] == 6 and run.calls["apply"] == 6
    assert table(60, runs).splitlines()[-1].split()[:2] == ["60", "med"]
    assert trips(runs, 6).startswith("rounds per recall")
    # no server pid given: no server CPU read, and no columns for it
    assert run.recall_server_s is None and run.raw_server_s is None
    assert "srv" not in table(60, runs)


def test_the_recall_benchmark_reads_the_cpu_time_of_the_process_it_is_given(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    from commonplace_weaviate._recall_bench import measure, table

    url = weaviate_backend_factory().url
    # the tests are not told the server's pid: this process's own CPU time stands in for
    # it, read around every recall and raw pair as the server's would be
    runs, _ = measure(url, notes=60, scopes=3, queries=6, runs=1, server_pid=os.getpid())
    (run,) = runs
    assert run.recall_server_s is not None and run.raw_server_s is not None
    assert run.recall_server_s >= 0.0 and run.raw_server_s >= 0.0
    head, _, *lines = table(60, runs).splitlines()
    assert head.split()[-4:] == ["recall", "srv", "raw", "srv"]
    assert all(len(line.split()) == 13 for line in lines)


def test_the_cpu_time_read_grows_with_the_work_a_process_does() -> None:
    from commonplace_weaviate._recall_bench import server_cpu_s

    before = server_cpu_s(os.getpid())
    spent = 0.0
    give_up = time.monotonic() + 60  # a read that never grows fails, instead of hanging
    while spent < 0.3 and time.monotonic() < give_up:  # 30 clock ticks of work at least
        sum(i * i for i in range(10_000))
        spent = server_cpu_s(os.getpid()) - before
    assert spent >= 0.3


def test_a_pid_whose_cpu_time_cannot_be_read_fails_before_the_bench_writes(
    weaviate_backend_factory: Callable[[], WeaviateBackend],
) -> None:
    from commonplace.errors import InvalidInputError
    from commonplace_weaviate._recall_bench import measure

    backend = weaviate_backend_factory()
    gone = 2**22 + 1  # above Linux's largest pid, so no process has it
    with pytest.raises(InvalidInputError, match=f"process {gone}.*pass the pid"):
        measure(backend.url, notes=60, scopes=3, queries=6, runs=1, server_pid=gone)
    assert backend.count(None, Kind.NOTE) == 0  # nothing was written


def test_the_bench_command_refuses_a_server_pid_it_cannot_read_before_it_starts(
    weaviate_backend_factory: Callable[[], WeaviateBackend], capsys: pytest.CaptureFixture[str]
) -> None:
    # the server's URL without the test store's prefix: the bench picks its own
    parts = urlsplit(weaviate_backend_factory().url)
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "prefix"])
    server = urlunsplit(parts._replace(query=query))
    gone = 2**22 + 1
    argv = ["bench", "--recall", "--url", server, "--notes", "60", "--queries", "2"]
    assert main([*argv, "--runs", "1", "--server-pid", str(gone)]) == 2
    out, err = capsys.readouterr()
    assert f"process {gone}" in err and "pass the pid" in err
    assert "writing" not in out  # it stopped before it wrote a store
