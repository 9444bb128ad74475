"""A real Weaviate server on loopback, for tests, CI and local development.

The server is built from source with ``go install`` at a pinned version from the
Go module proxy (no container, no prebuilt download), cached under
``~/.cache/commonplace/weaviate-<version>/`` and started with anonymous access,
no modules, no auto-schema, telemetry off, a temporary data path and its own
HTTP and gRPC ports, all bound to 127.0.0.1::

    installed = install()                      # builds once (~2-4 min), then cached
    with LocalServer(installed.path, data_dir=tmp) as server:
        memory = Memory(server.url)            # weaviate://127.0.0.1:PORT?grpc_port=PORT

:class:`LocalCluster` starts several nodes that form one Raft cluster, for
replication tests. Nothing here runs at import time.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from ._errors import WeaviateServerError

__all__ = [
    "DEFAULT_VERSION",
    "GO_PACKAGE",
    "Installed",
    "LocalCluster",
    "LocalServer",
    "NodePorts",
    "binary_path",
    "cache_root",
    "install",
]

#: The Weaviate release the tests and CI build; weaviate-client 4.24 needs 1.27 or newer.
DEFAULT_VERSION = "1.35.2"
GO_PACKAGE = "github.com/weaviate/weaviate/cmd/weaviate-server"
_LOOPBACK = "127.0.0.1"
_KEPT_ENV = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


def cache_root() -> Path:
    """``$COMMONPLACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/commonplace``, else ``~/.cache/...``."""
    configured = os.environ.get("COMMONPLACE_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "commonplace"


def binary_path(version: str = DEFAULT_VERSION, *, cache_dir: Path | None = None) -> Path:
    """Where the server binary of ``version`` is cached."""
    return (cache_dir or cache_root()) / f"weaviate-{version}" / "weaviate-server"


@dataclass(frozen=True, slots=True)
class Installed:
    """A cached server binary, and how long getting it took (0 when it was cached)."""

    path: Path
    version: str
    seconds: float
    built: bool


def install(
    *,
    version: str = DEFAULT_VERSION,
    cache_dir: Path | None = None,
    go: str | None = None,
    timeout: float = 3600.0,
) -> Installed:
    """The server binary of ``version``, built with ``go install`` unless already cached.

    Concurrent callers (two test runs) build once: the build holds a lock file and
    moves the finished binary into place atomically, so a half-built file is never
    cached.
    """
    target = binary_path(version, cache_dir=cache_dir)
    if _usable(target):
        return Installed(target, version, 0.0, False)
    go = go or shutil.which("go")
    if go is None:
        raise WeaviateServerError(
            "building the Weaviate server needs the Go toolchain (`go` on PATH, 1.24 or newer); "
            "install Go, or run the tests against your own server with "
            "COMMONPLACE_WEAVIATE_URL=weaviate://host:8080?grpc_port=50051"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with _file_lock(target.parent / ".build.lock"):
        if _usable(target):  # another process built it while we waited
            return Installed(target, version, time.perf_counter() - started, False)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
            env = dict(os.environ, GOBIN=tmp)
            try:
                done = subprocess.run(
                    [go, "install", f"{GO_PACKAGE}@v{version}"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise WeaviateServerError(
                    f"go install of Weaviate {version} did not finish in {timeout:.0f}s; "
                    "check network access to the Go module proxy"
                ) from exc
            built = Path(tmp) / "weaviate-server"
            if done.returncode != 0 or not built.is_file():
                raise WeaviateServerError(
                    f"`go install {GO_PACKAGE}@v{version}` failed (exit {done.returncode}):\n"
                    f"{_tail(done.stderr)}\nfix the Go toolchain or proxy access, or point the "
                    "tests at your own server with COMMONPLACE_WEAVIATE_URL"
                )
            os.replace(built, target)
    return Installed(target, version, time.perf_counter() - started, True)


def _usable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    if sys.platform == "win32":  # pragma: no cover - the helper is for POSIX CI machines
        yield
        return
    import fcntl

    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass(frozen=True, slots=True)
class NodePorts:
    """The ports of one node; Weaviate expects data = gossip + 1 and Raft RPC = Raft + 1."""

    http: int
    grpc: int
    gossip: int
    raft: int

    @property
    def data(self) -> int:
        return self.gossip + 1

    @property
    def raft_rpc(self) -> int:
        return self.raft + 1

    @classmethod
    def free(cls) -> NodePorts:
        """Six consecutive ports that are free on 127.0.0.1 right now."""
        return cls.block(1)[0]

    @classmethod
    def block(cls, nodes: int) -> list[NodePorts]:
        """Ports for ``nodes`` nodes, from one block of free consecutive ports."""
        base = _free_block(6 * nodes)
        return [
            cls(http=b, grpc=b + 1, gossip=b + 2, raft=b + 4)
            for b in range(base, base + 6 * nodes, 6)
        ]


def _free_block(size: int) -> int:
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind((_LOOPBACK, 0))
            base = int(probe.getsockname()[1])
        if base + size >= 65535:
            continue
        if all(_port_free(port) for port in range(base, base + size)):
            return base
    raise WeaviateServerError("found no block of free ports on 127.0.0.1; free some ports")


def _port_free(port: int) -> bool:
    for host in (_LOOPBACK, "0.0.0.0"):  # gRPC listens on every interface
        with socket.socket() as probe:
            try:
                probe.bind((host, port))
            except OSError:
                return False
    return True


@dataclass
class _Peer:
    name: str
    ports: NodePorts


@dataclass
class LocalServer:
    """One Weaviate node as a child process, bound to loopback, stopped on exit.

    ``api_key`` switches anonymous access off and accepts that key instead.
    ``peers`` (with ``bootstrap_expect``) make it one node of a cluster.
    """

    binary: Path
    data_dir: Path
    ports: NodePorts = field(default_factory=NodePorts.free)
    name: str = "node1"
    api_key: str | None = None
    peers: Sequence[_Peer] = ()
    join_gossip: Sequence[int] = ()
    log_path: Path | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        """The commonplace store URL of this node (``weaviate://127.0.0.1:HTTP?grpc_port=G``)."""
        return f"weaviate://{_LOOPBACK}:{self.ports.http}?grpc_port={self.ports.grpc}"

    @property
    def http_url(self) -> str:
        return f"http://{_LOOPBACK}:{self.ports.http}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def environment(self) -> dict[str, str]:
        """The environment the node runs with (inherited settings are not passed on)."""
        env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
        peers = list(self.peers) or [_Peer(self.name, self.ports)]
        env.update(
            {
                "PERSISTENCE_DATA_PATH": str(self.data_dir),
                "DEFAULT_VECTORIZER_MODULE": "none",
                "ENABLE_MODULES": "",
                "API_BASED_MODULES_DISABLED": "true",
                "AUTOSCHEMA_ENABLED": "false",
                "DISABLE_TELEMETRY": "true",
                "GO_PROFILING_DISABLE": "true",
                "PROMETHEUS_MONITORING_ENABLED": "false",
                "LOG_LEVEL": "info",
                "LOG_FORMAT": "text",
                "QUERY_DEFAULTS_LIMIT": "25",
                "GRPC_PORT": str(self.ports.grpc),
                "CLUSTER_HOSTNAME": self.name,
                "CLUSTER_ADVERTISE_ADDR": _LOOPBACK,
                "CLUSTER_BIND_ADDR": _LOOPBACK,
                "CLUSTER_GOSSIP_BIND_PORT": str(self.ports.gossip),
                "CLUSTER_DATA_BIND_PORT": str(self.ports.data),
                "CLUSTER_IN_LOCALHOST": "true",
                "RAFT_PORT": str(self.ports.raft),
                "RAFT_INTERNAL_RPC_PORT": str(self.ports.raft_rpc),
                "RAFT_JOIN": ",".join(f"{p.name}:{p.ports.raft}" for p in peers),
                "RAFT_BOOTSTRAP_EXPECT": str(len(peers)),
                # the default multiplier (5) makes a one-node bootstrap take ~10 s instead of ~3 s
                "RAFT_TIMEOUTS_MULTIPLIER": "1",
            }
        )
        if self.join_gossip:
            env["CLUSTER_JOIN"] = ",".join(f"{_LOOPBACK}:{p}" for p in self.join_gossip)
        if self.api_key is None:
            env["AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED"] = "true"
        else:
            env.update(
                {
                    "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
                    "AUTHENTICATION_APIKEY_ENABLED": "true",
                    "AUTHENTICATION_APIKEY_ALLOWED_KEYS": self.api_key,
                    "AUTHENTICATION_APIKEY_USERS": "commonplace",
                }
            )
        env.update(self.extra_env)
        return env

    def spawn(self) -> None:
        """Start the process without waiting for it to be ready."""
        if self.running:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path or self.data_dir.parent / f"{self.data_dir.name}.log"
        with open(log, "ab") as out:
            self._process = subprocess.Popen(
                [
                    str(self.binary),
                    "--host",
                    _LOOPBACK,
                    "--port",
                    str(self.ports.http),
                    "--scheme",
                    "http",
                ],
                env=self.environment(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.log_path = log

    def wait_ready(self, *, timeout: float = 120.0) -> None:
        """Block until ``/v1/.well-known/ready`` answers 200, or raise with the log's tail."""
        deadline = time.monotonic() + timeout
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise WeaviateServerError(
                    f"Weaviate node {self.name} exited with code {self._process.returncode} "
                    f"while starting; its log ({self.log_path}) ends with:\n{self.log_tail()}"
                )
            if _ready(self.http_url):
                return
            if time.monotonic() > deadline:
                raise WeaviateServerError(
                    f"Weaviate node {self.name} was not ready after {timeout:.0f}s; its log "
                    f"({self.log_path}) ends with:\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def start(self, *, timeout: float = 120.0) -> float:
        """Start the node and wait until it is ready; returns the seconds that took."""
        started = time.perf_counter()
        self.spawn()
        try:
            self.wait_ready(timeout=timeout)
        except BaseException:
            self.stop()
            raise
        return time.perf_counter() - started

    def stop(self, *, timeout: float = 30.0) -> None:
        """Stop gracefully (SIGTERM), then for good (SIGKILL) after ``timeout``."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)

    def kill(self) -> None:
        """Stop abruptly, as a crash or a power cut would."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=30)

    def detach(self) -> int:
        """Leave the node running after this object is gone; returns its pid."""
        if self._process is None:
            raise WeaviateServerError("the node is not running")
        pid = self._process.pid
        self._process.returncode = 0  # tell Popen's finaliser not to warn about a live child
        self._process = None
        return pid

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return _tail(self.log_path.read_text(errors="replace"), lines)

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _ready(http_url: str) -> bool:
    try:
        with urllib.request.urlopen(http_url + "/v1/.well-known/ready", timeout=2) as reply:
            return int(reply.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


class LocalCluster:
    """``nodes`` Weaviate nodes on loopback forming one Raft cluster (for replication tests)."""

    def __init__(self, binary: Path, *, base_dir: Path, nodes: int = 3) -> None:
        if nodes < 1:
            raise WeaviateServerError("a cluster needs at least one node")
        ports = NodePorts.block(nodes)
        peers = [_Peer(f"node{i + 1}", p) for i, p in enumerate(ports)]
        self.servers = [
            LocalServer(
                binary,
                data_dir=base_dir / peer.name,
                ports=peer.ports,
                name=peer.name,
                peers=peers,
                join_gossip=() if i == 0 else (ports[0].gossip,),
                log_path=base_dir / f"{peer.name}.log",
            )
            for i, peer in enumerate(peers)
        ]

    def start(self, *, timeout: float = 180.0) -> float:
        """Start every node (the first one first, so the others can join it)."""
        started = time.perf_counter()
        try:
            for server in self.servers:
                server.spawn()
                time.sleep(0.3)
            for server in self.servers:
                server.wait_ready(timeout=timeout)
        except BaseException:
            self.stop()
            raise
        return time.perf_counter() - started

    def stop(self) -> None:
        for server in self.servers:
            server.stop()

    def __enter__(self) -> LocalCluster:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
