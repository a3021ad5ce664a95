"""A TCP link to a real Redis that can lose the reply to a write, as when the server dies
after running a script but before its answer reaches the bot."""

from __future__ import annotations

import asyncio
import contextlib


class FlakyLink:
    """127.0.0.1 proxy in front of a Redis; `lose_next_script_reply()` drops the answer to
    the next EVALSHA/EVAL and then refuses connections until `restore()`."""

    def __init__(self, upstream_host: str, upstream_port: int, password: str = "") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.password = password
        self.down = False
        self._armed = False
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    async def start(self) -> str:
        """Listen; return the redis:// URL to use."""
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def lose_next_script_reply(self) -> None:
        """The next script runs in Redis, but its reply is lost and the link goes down."""
        self._armed = True

    def restore(self) -> None:
        """The link (the server, as far as the bot can tell) is back."""
        self.down = False

    async def stop(self) -> None:
        """Close everything."""
        for w in list(self._writers):
            w.close()
        if self._server:
            self._server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        self._writers |= {writer, up_writer}
        script_sent = asyncio.Event()

        async def to_server() -> None:
            while data := await reader.read(65536):
                if self._armed and (b"EVALSHA" in data.upper() or b"\r\nEVAL\r\n" in data):
                    self._armed = False
                    script_sent.set()
                up_writer.write(data)
                await up_writer.drain()

        async def to_client() -> None:
            while data := await up_reader.read(65536):
                if script_sent.is_set():  # the script ran; its answer never arrives
                    self.down = True
                    break
                writer.write(data)
                await writer.drain()

        tasks = [asyncio.create_task(to_server()), asyncio.create_task(to_client())]
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in tasks:
            t.cancel()
        for w in (writer, up_writer):
            w.close()
            self._writers.discard(w)
