"""A TCP link between a replica and its master that can stall and then be cut, losing what
it held: a replication link that stops carrying writes (a congested or partitioned network),
not a paused replica (whose kernel would still buffer and later apply them)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from urllib.parse import urlsplit, urlunsplit


class StallLink:
    """127.0.0.1 proxy to an upstream port; `stall()` stops carrying bytes both ways (they
    wait in the link), `cut()` drops every connection and what it held."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self._stalled = threading.Event()
        self._closed = threading.Event()
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def stall(self) -> None:
        """Stop carrying bytes (they stay in the link)."""
        self._stalled.set()

    def resume(self) -> None:
        """Carry bytes again, those that waited first (a link that recovers)."""
        self._stalled.clear()

    def cut(self) -> None:
        """Drop every connection, and with it what the stalled link held; refuse new ones."""
        self._closed.set()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in [*socks, self._listener]:
            with contextlib.suppress(OSError):
                s.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                down, _ = self._listener.accept()
                up = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
            except OSError:
                return
            up.settimeout(None)
            with self._lock:
                self._socks += [down, up]
            for src, dst in ((down, up), (up, down)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        while not self._closed.is_set():
            if self._stalled.is_set():  # leave the bytes unread: they never arrive
                time.sleep(0.01)
                continue
            try:
                data = src.recv(65536)
                if not data:
                    break
                while self._stalled.is_set() and not self._closed.is_set():
                    time.sleep(0.01)  # it arrived as the link stalled: held, not carried
                if self._closed.is_set():
                    break
                dst.sendall(data)
            except OSError:
                break
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.close()


def through(url: str, port: int) -> str:
    """The same server's URL through a local link on `port`."""
    parts = urlsplit(url)
    auth = parts.netloc.rpartition("@")[0]
    return urlunsplit(parts._replace(netloc=(auth + "@" if auth else "") + f"127.0.0.1:{port}"))
