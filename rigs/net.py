"""Loopback ports for the servers tests and benchmarks start, and the bot's HTTP server on one."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.domain.routes import Route
from bot.web.host import HttpHost, application


def free_port() -> int:
    """A TCP port nothing listens on right now (its +10000 bus port too, for a cluster)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < 55000:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


@asynccontextmanager
async def serving(routes: list[Route]) -> AsyncIterator[int]:
    """The bot's HTTP server on a free loopback port with these routes; yields the port."""
    host = HttpHost(application(routes), 0)
    port = await host.start()
    try:
        yield port
    finally:
        await host.stop()
